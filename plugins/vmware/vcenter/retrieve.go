package vcenter

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/vmware/govmomi/vim25"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"
	"github.com/vmware/govmomi/vim25/xml"
)

// retrieveFirst is methods.RetrievePropertiesEx with the answer read by
// decodeResult (govmomi's decoder only for what decodeResult refuses).
func retrieveFirst(ctx context.Context, vc *vim25.Client, req *types.RetrievePropertiesEx) (*types.RetrieveResult, error) {
	var body methods.RetrievePropertiesExBody
	body.Req = req
	return roundTrip(ctx, vc, &body, func() *types.RetrieveResult {
		if body.Res == nil {
			return nil
		}
		return body.Res.Returnval
	})
}

// retrieveNext is methods.ContinueRetrievePropertiesEx, read the same way.
func retrieveNext(ctx context.Context, vc *vim25.Client, req *types.ContinueRetrievePropertiesEx) (*types.RetrieveResult, error) {
	var body methods.ContinueRetrievePropertiesExBody
	body.Req = req
	return roundTrip(ctx, vc, &body, func() *types.RetrieveResult {
		if body.Res == nil {
			return nil
		}
		return &body.Res.Returnval
	})
}

// roundTrip sends body's request as govmomi's SOAP client does and reads
// the answer with decodeResult; a fault (HTTP 500) or anything
// decodeResult refuses is decoded into body by govmomi, and slow gives
// its result.
func roundTrip(ctx context.Context, vc *vim25.Client, body soap.HasFault, slow func() *types.RetrieveResult) (*types.RetrieveResult, error) {
	env, err := xml.Marshal(soap.Envelope{Body: body})
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, vc.URL().String(),
		io.MultiReader(strings.NewReader(xml.Header), bytes.NewReader(env)))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", `text/xml; charset="utf-8"`)
	req.Header.Set("SOAPAction", vc.Namespace+"/"+vc.Version)
	var res *types.RetrieveResult
	err = vc.Client.Do(ctx, req, func(resp *http.Response) error {
		if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusInternalServerError {
			return fmt.Errorf("%s %s: %s", req.Method, req.URL.Path, resp.Status)
		}
		raw, err := readAll(resp)
		if err != nil {
			return err
		}
		if resp.StatusCode == http.StatusOK {
			if r, found, ok := decodeResult(raw); ok {
				if found {
					res = &r
				}
				return nil
			}
		}
		dec := xml.NewDecoder(bytes.NewReader(raw))
		dec.TypeFunc = vc.Types
		if err := dec.Decode(&soap.Envelope{Body: body}); err != nil {
			return err
		}
		if f := body.Fault(); f != nil {
			return soap.WrapSoapFault(f)
		}
		res = slow()
		return nil
	})
	return res, err
}

// readAll reads a body whose length is known (guest.Transport sets it)
// in one allocation.
func readAll(resp *http.Response) ([]byte, error) {
	var buf bytes.Buffer
	if n := resp.ContentLength; n > 0 && n < 1<<30 {
		buf.Grow(int(n) + 1)
	}
	_, err := buf.ReadFrom(resp.Body)
	return buf.Bytes(), err
}
