package soak

import (
	"errors"

	"github.com/rpengine/rpengine/engine"
)

func (r *Runner) wasmSource() (engine.Source, func(), error) {
	return nil, nil, errors.New("soak: wasm mode not built yet")
}
