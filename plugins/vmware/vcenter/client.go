package vcenter

import (
	"context"
	"fmt"
	"net/http"
	"net/url"

	"github.com/vmware/govmomi/vim25"
	"github.com/vmware/govmomi/vim25/soap"
)

// Client lists one vCenter's clusters. It holds the vim25 client (and so
// the ServiceContent, read once per instance) across calls.
type Client struct {
	cfg Config
	rt  http.RoundTripper
	vc  *vim25.Client
	log func(level int32, msg string)
}

// New makes a client that reaches vCenter through rt (guest.Transport in
// the sandbox; any transport natively). It makes no call yet.
func New(cfg Config, rt http.RoundTripper, log func(int32, string)) *Client {
	if log == nil {
		log = func(int32, string) {}
	}
	return &Client{cfg: cfg, rt: rt, log: log}
}

// connect reads the ServiceContent once. The URL's host is the service
// name: guest.Transport sends it to the granted vCenter, whose /sdk it is.
func (c *Client) connect(ctx context.Context) (*vim25.Client, error) {
	if c.vc != nil {
		return c.vc, nil
	}
	u := &url.URL{Scheme: "https", Host: c.cfg.Service, Path: "/sdk"}
	sc := soap.NewClient(u, false)
	sc.Client.Transport = c.rt
	vc, err := vim25.NewClient(ctx, sc)
	if err != nil {
		return nil, fmt.Errorf("vcenter %s: service content: %w", c.cfg.Service, err)
	}
	c.vc = vc
	return vc, nil
}
