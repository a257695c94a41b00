package guesttest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/rpengine/rpengine/hostabi"
	"github.com/rpengine/rpengine/hostabi/guest"
	"github.com/rpengine/rpengine/hostabi/projection"
	"github.com/rpengine/rpengine/internal/wasmhost"
)

// Native loads p in this process with wasmhost.Native, through the SDK's
// own dispatch (guest.Handle); guest.HTTP and guest.Log reach the host's
// gate and logger.
//
// guest.HTTP is process-global in native builds: the last plugin loaded
// serves it.
func Native(ctx context.Context, p guest.Plugin, config []byte, opts wasmhost.Options) (*wasmhost.Plugin, error) {
	return wasmhost.Native(ctx, wasmhost.NativeGuest{
		Label:  fmt.Sprintf("%T (native)", p),
		Handle: func(export string, in []byte) []byte { return guest.Handle(p, export, in) },
		Bind: func(http func([]byte) []byte, log func(int32, string)) {
			guest.SetHTTPForTest(func(req guest.HTTPRequest) (guest.HTTPResponse, error) {
				return frameHTTP(http, req)
			})
			guest.SetLogForTest(log)
		},
	}, config, opts)
}

// frameHTTP runs a guest request through the host's frames, as the
// wasm import would.
func frameHTTP(http func([]byte) []byte, req guest.HTTPRequest) (guest.HTTPResponse, error) {
	h := hostabi.HTTPRequestHead{Service: req.Service, Method: req.Method, Path: req.Path, Header: req.Header}
	if req.Project != nil {
		spec, err := projection.ToSpec(*req.Project)
		if err != nil {
			return guest.HTTPResponse{}, err
		}
		h.Project = &spec
	}
	head, _ := json.Marshal(h)
	rawHead, body, err := hostabi.SplitFrame(http(hostabi.AppendFrame(nil, head, req.Body)))
	if err != nil {
		return guest.HTTPResponse{}, err
	}
	var rh hostabi.HTTPResponseHead
	if err := json.Unmarshal(rawHead, &rh); err != nil {
		return guest.HTTPResponse{}, err
	}
	if rh.Error != "" {
		return guest.HTTPResponse{}, errors.New(strings.TrimSpace(rh.Error))
	}
	if rh.Projected { // the gate projected it: hand over the records, as the SDK would
		r, err := projection.ParseWire(body)
		if err != nil {
			return guest.HTTPResponse{Status: rh.Status, Header: rh.Header, ProjectErr: err}, nil
		}
		return guest.HTTPResponse{Status: rh.Status, Header: rh.Header, Projected: &r}, nil
	}
	return guest.HTTPResponse{Status: rh.Status, Header: rh.Header, Body: body}, nil
}
