package wasmhost

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/tetratelabs/wazero/api"

	"github.com/rpengine/rpengine/hostabi"
)

// maxLogLine bounds what one log call may copy out of the guest.
const maxLogLine = 64 << 10

func (p *Plugin) hostFunctions(ctx context.Context) error {
	_, err := p.rt.NewHostModuleBuilder(hostabi.HostModule).
		NewFunctionBuilder().WithFunc(p.log).Export(hostabi.ImportLog).
		Instantiate(ctx)
	if err != nil {
		return fmt.Errorf("host module: %w", err)
	}
	return nil
}

func (p *Plugin) log(ctx context.Context, m api.Module, level int32, ptr, n uint32) {
	if n > maxLogLine {
		n = maxLogLine
	}
	msg, ok := m.Memory().Read(ptr, n)
	if !ok {
		return
	}
	p.opts.Logger.Log(ctx, slog.Level(level), string(msg), "plugin", p.name)
}
