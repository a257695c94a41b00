package main

import (
	"encoding/json"
	"errors"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/rpengine/rpengine/hostabi"
	"github.com/rpengine/rpengine/hostabi/guest"
	"github.com/rpengine/rpengine/plugins/ironic/internal/decoders"
	"github.com/rpengine/rpengine/plugins/ironic/ironic"
)

type bench struct {
	dec    ironic.PageDecoder
	encode bool
	client *ironic.Client
	pages  [][]byte
}

func (b *bench) Configure(raw []byte) (string, error) {
	var cfg struct {
		Decoder string `json:"decoder"`
		Encode  bool   `json:"encode"`
		GOGC    int    `json:"gogc"`
	}
	if err := json.Unmarshal(raw, &cfg); err != nil {
		return "", err
	}
	if b.dec = decoders.All[cfg.Decoder]; b.dec == nil {
		return "", errors.New("benchguest: unknown decoder " + cfg.Decoder)
	}
	b.encode = cfg.Encode
	if cfg.GOGC == 0 {
		cfg.GOGC = ironic.GuestGCPercent // as the plugin runs
	}
	debug.SetGCPercent(cfg.GOGC)
	b.client = ironic.New(ironic.Config{PageSize: 1000, MaxRestarts: 0}, b.record)
	return "benchguest", nil
}

// record keeps each node page as the plugin received it.
func (b *bench) record(req guest.HTTPRequest) (guest.HTTPResponse, error) {
	req.Project = nil // keep the bodies: the decoders under test read them
	resp, err := guest.HTTP(req)
	if err == nil && resp.Status == 200 && strings.HasPrefix(req.Path, "/v1/nodes?") {
		b.pages = append(b.pages, resp.Body)
	}
	return resp, err
}

func (b *bench) ListNodes(req hostabi.ListNodesRequest) ([]hostabi.Node, error) {
	if b.pages == nil {
		if _, err := b.client.ListNodes(req); err != nil {
			return nil, err
		}
	}
	n, st, err := decoders.Run(b.pages, b.dec, b.encode)
	if err != nil {
		return nil, err
	}
	ns := func(d time.Duration) string { return strconv.FormatInt(d.Nanoseconds(), 10) }
	return []hostabi.Node{{UUID: "00000000-0000-4000-8000-000000000000",
		Name: ns(st.Decode) + "," + ns(st.Merge) + "," + ns(st.Encode), ResourceClass: strconv.Itoa(n)}}, nil
}

func (b *bench) ListInstances() ([]hostabi.Instance, error) { return []hostabi.Instance{}, nil }

func init() { guest.Run(&bench{}) }

func main() {}
