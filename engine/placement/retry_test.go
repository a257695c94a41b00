package placement

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rpengine/rpengine/internal/testing/placementfake"
)

// inProcess serves h without a network, so synctest can run the backoff:
// a goroutine blocked on a socket would keep the bubble's clock still.
type inProcess struct{ h http.Handler }

func (t inProcess) RoundTrip(r *http.Request) (resp *http.Response, err error) {
	defer func() {
		if v := recover(); v != nil {
			if v != http.ErrAbortHandler { // placementfake's Drop: the line is cut
				panic(v)
			}
			resp, err = nil, io.ErrUnexpectedEOF
		}
	}()
	rec := httptest.NewRecorder()
	in := r.Clone(r.Context())
	if in.Body == nil {
		in.Body = http.NoBody // a server request always has one
	}
	t.h.ServeHTTP(rec, in)
	return rec.Result(), nil
}

func fakeClient(t *testing.T, h http.Handler, retry Retry) *Client {
	t.Helper()
	c, err := New(t.Context(), Config{Endpoint: "http://placement.test", Token: "admin", Transport: inProcess{h}, Retry: retry})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

const testUUID = "5b4c3a28-0000-4000-8000-000000000001"

func TestTransientFaultsAreRetriedWithBoundedBackoff(t *testing.T) {
	for _, tc := range []struct {
		name  string
		fault placementfake.Fault
		call  func(context.Context, *Client, Generation) error
	}{
		{"read 502", placementfake.Fault{Method: "GET", Path: "/resource_providers/*/traits", Status: 502, Times: 2},
			func(ctx context.Context, c *Client, _ Generation) error {
				_, _, err := c.Traits(ctx, testUUID)
				return err
			}},
		{"guarded write 503", placementfake.Fault{Method: "PUT", Path: "/resource_providers/*/inventories", Status: 503, Times: 2},
			func(ctx context.Context, c *Client, g Generation) error {
				_, err := c.SetInventories(ctx, testUUID, g, map[string]Inventory{})
				return err
			}},
		{"dropped connection", placementfake.Fault{Method: "PUT", Path: "/resource_providers/*/aggregates", Drop: true, Times: 2},
			func(ctx context.Context, c *Client, g Generation) error {
				_, err := c.SetAggregates(ctx, testUUID, g, nil)
				return err
			}},
		{"trait create 500", placementfake.Fault{Method: "PUT", Path: "/traits/*", Status: 500, Times: 2},
			func(ctx context.Context, c *Client, _ Generation) error { return c.EnsureTrait(ctx, "CUSTOM_RETRIED") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fake := placementfake.New()
			defer fake.Close()
			synctest.Test(t, func(t *testing.T) {
				retry := Retry{Attempts: 4, Base: 100 * time.Millisecond, Max: time.Second}
				c := fakeClient(t, fake, retry)
				p, err := c.CreateProvider(t.Context(), testUUID, "n1")
				if err != nil {
					t.Fatal(err)
				}
				in := fake.Inject(tc.fault)
				start, before := time.Now(), c.Requests()
				if err := tc.call(t.Context(), c, p.Generation); err != nil {
					t.Fatalf("not healed by retries: %v", err)
				}
				if in.Fired() != 2 || c.Requests()-before != 3 || c.Retries() != 2 {
					t.Fatalf("fired %d, requests %d, retries %d; want 2, 3, 2", in.Fired(), c.Requests()-before, c.Retries())
				}
				// Full jitter: at most base + 2*base of waiting for two retries.
				if waited := time.Since(start); waited <= 0 || waited > 300*time.Millisecond {
					t.Fatalf("waited %v between tries, want (0, 300ms]", waited)
				}
			})
		})
	}
}

func TestRetriesAreBoundedAndTheLastErrorNamesTheAnswer(t *testing.T) {
	fake := placementfake.New()
	defer fake.Close()
	synctest.Test(t, func(t *testing.T) {
		c := fakeClient(t, fake, Retry{Attempts: 3})
		in := fake.Inject(placementfake.Fault{Method: "GET", Path: "/resource_providers/*", Status: 502})
		_, err := c.GetProvider(t.Context(), testUUID)
		var api *APIError
		if !errors.As(err, &api) || api.Status != 502 || in.Fired() != 3 {
			t.Fatalf("err %v after %d tries, want a 502 after 3", err, in.Fired())
		}
		msg := err.Error()
		for _, want := range []string{"502 Bad Gateway", "Bad gateway. placementfake: injected fault", "[request req-"} {
			if !strings.Contains(msg, want) {
				t.Errorf("error %q lacks %q", msg, want)
			}
		}
	})
}

func TestCreateIsRetriedDeleteIsNot(t *testing.T) {
	fake := placementfake.New()
	defer fake.Close()
	synctest.Test(t, func(t *testing.T) {
		c := fakeClient(t, fake, Retry{})
		create := fake.Inject(placementfake.Fault{Method: "POST", Status: 502, Times: 1})
		if _, err := c.CreateProvider(t.Context(), testUUID, "n1"); err != nil || create.Fired() != 1 {
			t.Fatalf("create: err %v, fired %d; want healed after one 502", err, create.Fired())
		}
		del := fake.Inject(placementfake.Fault{Method: "DELETE", Drop: true})
		if err := c.DeleteProvider(t.Context(), testUUID); err == nil || del.Fired() != 1 {
			t.Fatalf("delete: err %v, tries %d; want one failed try", err, del.Fired())
		}
		if c.Retries() != 1 {
			t.Fatalf("%d retries, want 1 (the create)", c.Retries())
		}
	})
}

func TestClientErrorsAreNotRetried(t *testing.T) {
	fake := placementfake.New()
	defer fake.Close()
	synctest.Test(t, func(t *testing.T) {
		c := fakeClient(t, fake, Retry{})
		before := c.Requests()
		if _, err := c.GetProvider(t.Context(), testUUID); !errors.Is(err, ErrNotFound) {
			t.Fatal(err)
		}
		if n := c.Requests() - before; n != 1 {
			t.Fatalf("a 404 was sent %d times", n)
		}
	})
}

func TestRetryWaitEndsWithTheContext(t *testing.T) {
	fake := placementfake.New()
	defer fake.Close()
	synctest.Test(t, func(t *testing.T) {
		c := fakeClient(t, fake, Retry{Attempts: 10, Base: time.Hour, Max: time.Hour})
		fake.Inject(placementfake.Fault{Method: "GET", Status: 503})
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		start := time.Now()
		if _, _, err := c.Traits(ctx, testUUID); err == nil {
			t.Fatal("no error")
		}
		if waited := time.Since(start); waited > time.Minute {
			t.Fatalf("retry outlived its context: %v", waited)
		}
	})
}

func TestBackoffStaysWithinItsCeiling(t *testing.T) {
	r := Retry{Base: 100 * time.Millisecond, Max: time.Second}.withDefaults()
	for attempt := 1; attempt <= 8; attempt++ {
		ceiling := min(100*time.Millisecond<<(attempt-1), time.Second)
		for range 200 {
			if d := r.backoff(attempt); d <= 0 || d > ceiling {
				t.Fatalf("attempt %d: %v outside (0, %v]", attempt, d, ceiling)
			}
		}
	}
}
