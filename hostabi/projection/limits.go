package projection

import (
	"errors"
	"fmt"
)

// Limits bound a projection the host runs for a plugin on a body it
// fetched (ABI.md §6, "Projected responses"): the body itself is bounded
// already, but a frame can outgrow its document (every record costs 8
// bytes per field asked, and an empty object is two bytes of JSON).
type Limits struct {
	// MaxBytes caps the frame (0: no cap); over it the projection stops
	// with a *TooLargeError, at the first record past the cap.
	MaxBytes int
	// Headroom is the number of free bytes the result has before the
	// frame, for the caller's own head: the frame is never copied again.
	Headroom int
	// Canceled, if set, is asked every 256 records; true stops the
	// projection with ErrCanceled.
	Canceled func() bool
}

// TooLargeError says a frame would exceed Limits.MaxBytes.
type TooLargeError struct{ Max int }

// Error names the cap.
func (e *TooLargeError) Error() string {
	return fmt.Sprintf("the projected body exceeds the %d-byte cap", e.Max)
}

// ErrCanceled is the projection stopped by Limits.Canceled.
var ErrCanceled = errors.New("projection canceled")

// HostProjectLimited runs p over doc natively under lim and returns the
// frame after lim.Headroom bytes. A document that is not JSON, or not of
// p's shape, is not a failure of the host: it comes back as an error
// frame the guest reads as the projection's error (exactly what
// HostProject answers). Only the limits fail: *TooLargeError, ErrCanceled.
func HostProjectLimited(doc []byte, p Projection, lim Limits) ([]byte, error) {
	frame, err := project(doc, p, lim)
	var big *TooLargeError
	switch {
	case err == nil:
		return frame, nil
	case errors.As(err, &big), errors.Is(err, ErrCanceled):
		return nil, err
	}
	msg := "json projection: " + err.Error()
	return append(make([]byte, lim.Headroom, lim.Headroom+len(msg)+8), errorFrame(msg)...), nil
}

// checkLimits is called after each record (n records read so far) and
// once at the end (n 0).
func (s *scanner) checkLimits(n int) error {
	if s.lim.MaxBytes > 0 && s.w.size() > s.lim.MaxBytes {
		return &TooLargeError{s.lim.MaxBytes}
	}
	if s.lim.Canceled != nil && n%256 == 0 && s.lim.Canceled() {
		return ErrCanceled
	}
	return nil
}

// HostProjectCapped is HostProject with the frame capped at max bytes: a
// frame over it is an error frame, as a bad document is. The host's
// json_project caps it at the guest's memory limit, which no frame the
// guest must hold can exceed.
func HostProjectCapped(doc, spec []byte, max int) []byte {
	p, err := decodeSpec(spec)
	if err != nil {
		return errorFrame(err.Error())
	}
	frame, err := project(doc, p, Limits{MaxBytes: max})
	if err != nil {
		return errorFrame("json projection: " + err.Error())
	}
	return frame
}
