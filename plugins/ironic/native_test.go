package main

import (
	"bytes"
	"io"
	"net/http"
	"strings"

	"github.com/rpengine/rpengine/hostabi/guest"
)

// nativeHTTP performs req against base with net/http, the way the host's
// gate answers guest.HTTP (canonical header keys, values joined).
func nativeHTTP(base string, req guest.HTTPRequest) (guest.HTTPResponse, error) {
	hreq, err := http.NewRequest(req.Method, base+req.Path, bytes.NewReader(req.Body))
	if err != nil {
		return guest.HTTPResponse{}, err
	}
	for k, v := range req.Header {
		hreq.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(hreq)
	if err != nil {
		return guest.HTTPResponse{}, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return guest.HTTPResponse{}, err
	}
	h := make(map[string]string, len(resp.Header))
	for k, v := range resp.Header {
		h[k] = strings.Join(v, ", ")
	}
	return guest.HTTPResponse{Status: resp.StatusCode, Header: h, Body: body}, nil
}
