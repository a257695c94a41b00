package placement

import (
	"fmt"
	"io"
	"strconv"

	"github.com/rpengine/rpengine/hostabi"
)

// Bounds on Placement's answers (placement.max_response and
// placement.max_providers). A listing at 1.39 is about 700 bytes per
// provider, links included: the defaults fit 180,000 providers, more
// than one Placement holds for a single engine's fleet.
const (
	DefaultMaxResponse  = 128 << 20
	DefaultMaxProviders = 180_000
)

// maxDrain bounds what is read of an unused or refused answer so that the
// connection can be reused; a larger rest closes the connection instead.
const maxDrain = 64 << 10

// cappedBody fails a read past max bytes: no answer costs more memory or
// time than the cap, whatever Content-Length says.
type cappedBody struct {
	r    io.Reader
	left int64
	max  int64
}

func capBody(r io.Reader, max int64) *cappedBody {
	return &cappedBody{r: r, left: max, max: max}
}

func (b *cappedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		// One byte more tells a body of exactly max bytes from a longer one.
		var one [1]byte
		if n, _ := b.r.Read(one[:]); n > 0 {
			return 0, tooLarge(b.max)
		}
		return b.r.Read(p)
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.r.Read(p)
	b.left -= int64(n)
	return n, err
}

// errTooLarge is an answer past placement.max_response.
type errTooLarge struct{ max int64 }

func (e errTooLarge) Error() string {
	return fmt.Sprintf("answer larger than placement.max_response (%d bytes): refused unread", e.max)
}

func tooLarge(max int64) error { return errTooLarge{max} }

// listing decodes a provider listing within the bounds: at most max
// providers, each with a valid uuid and parent uuid (Placement validates
// both on create, so anything else did not come from it). Any breach
// refuses the whole answer: the cycle then writes nothing.
type listing struct {
	max   int
	names bool
	add   func(Provider) error
}

func (l listing) decodeFrom(r io.Reader) error {
	n := 0
	return decodeProviders(r, l.names, func(p Provider) error {
		if n++; n > l.max {
			return fmt.Errorf("more than placement.max_providers (%d) providers listed", l.max)
		}
		if err := validListed(p); err != nil {
			return err
		}
		return l.add(p)
	})
}

func validListed(p Provider) error {
	if !hostabi.ValidUUID(p.UUID) {
		return fmt.Errorf("provider uuid %s is not a uuid", quoteCut(p.UUID))
	}
	if err := validGeneration(p.Generation); err != nil {
		return fmt.Errorf("provider %s: %w", p.UUID, err)
	}
	if p.ParentUUID != nil && !hostabi.ValidUUID(*p.ParentUUID) {
		return fmt.Errorf("provider %s: parent_provider_uuid %s is not a uuid", p.UUID, quoteCut(*p.ParentUUID))
	}
	return nil
}

// validGeneration accepts what Placement sends: a non-negative JSON
// integer that fits in 63 bits, in its plain form. It is still sent back
// byte for byte; the check, on every answer the client returns a
// generation from, keeps a 10 MiB string out of writes and the state file.
func validGeneration(g Generation) error {
	b := []byte(g)
	if len(b) == 0 || len(b) > 19 || (len(b) > 1 && b[0] == '0') {
		return fmt.Errorf("generation %s is not an integer in [0, 2^63)", quoteCut(string(b)))
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return fmt.Errorf("generation %s is not an integer in [0, 2^63)", quoteCut(string(b)))
		}
	}
	if _, err := strconv.ParseInt(string(b), 10, 64); err != nil {
		return fmt.Errorf("generation %s is not an integer in [0, 2^63)", quoteCut(string(b)))
	}
	return nil
}

// quoteCut quotes s for an error, cut to 64 bytes with control and bidi
// characters escaped (strconv.Quote escapes both).
func quoteCut(s string) string {
	if len(s) > 64 {
		return strconv.Quote(s[:64]) + fmt.Sprintf("… (%d bytes)", len(s))
	}
	return strconv.Quote(s)
}

// required names a key an answer lacked (or sent as null): read as empty,
// it would make the engine overwrite what is there.
func required(key string, missing bool) error {
	if missing {
		return fmt.Errorf("answer without %q", key)
	}
	return nil
}
