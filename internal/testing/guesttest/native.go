package guesttest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/rpengine/rpengine/hostabi"
	"github.com/rpengine/rpengine/hostabi/guest"
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
	head, _ := json.Marshal(hostabi.HTTPRequestHead{Service: req.Service, Method: req.Method, Path: req.Path, Header: req.Header})
	rawHead, body, err := hostabi.SplitFrame(http(hostabi.AppendFrame(nil, head, req.Body)))
	if err != nil {
		return guest.HTTPResponse{}, err
	}
	var h hostabi.HTTPResponseHead
	if err := json.Unmarshal(rawHead, &h); err != nil {
		return guest.HTTPResponse{}, err
	}
	if h.Error != "" {
		return guest.HTTPResponse{}, errors.New(strings.TrimSpace(h.Error))
	}
	return guest.HTTPResponse{Status: h.Status, Header: h.Header, Body: body}, nil
}
