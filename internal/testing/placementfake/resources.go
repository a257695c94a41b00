package placementfake

import (
	"net/http"
	"strconv"
	"strings"
)

// withResources handles "?resources=RC:N,RC2:M": providers with room for
// each amount, as the real server's query has it (research_context.py):
// used + N <= (total - reserved) * allocation_ratio, min_unit <= N <=
// max_unit, N % step_size == 0. The caller holds s.mu.
func (s *Server) withResources(c *call, v string) (func(*provider) bool, bool) {
	const form = "Badly formed resources parameter. Expected resources query string parameter in form: ?resources=VCPU:2,MEMORY_MB:1024. Got: "
	if strings.TrimSpace(v) == "" {
		c.fail(http.StatusBadRequest, "", form+"empty string.")
		return nil, false
	}
	want := map[string]int64{}
	for _, rt := range strings.Split(v, ",") {
		rc, amount, ok := strings.Cut(rt, ":")
		if !ok || strings.Contains(amount, ":") {
			c.fail(http.StatusBadRequest, "", form+rt+".")
			return nil, false
		}
		n, err := strconv.ParseInt(strings.TrimSpace(amount), 10, 64)
		switch {
		case err != nil:
			c.fail(http.StatusBadRequest, "", "Requested resource "+rc+" expected positive integer amount. Got: "+amount+".")
			return nil, false
		case n < 1:
			c.fail(http.StatusBadRequest, "", "Requested resource "+rc+" requires amount >= 1. Got: "+strconv.FormatInt(n, 10)+".")
			return nil, false
		case !s.st.classes[rc]:
			c.fail(http.StatusBadRequest, "", "Invalid resource class in resources parameter: No such resource class "+rc+".")
			return nil, false
		}
		want[rc] = n
	}
	return func(p *provider) bool {
		for rc, n := range want {
			inv, ok := p.inv[rc]
			if !ok || n < inv.MinUnit || n > inv.MaxUnit || n%inv.StepSize != 0 ||
				float64(p.usage[rc]+n) > inv.capacity() {
				return false
			}
		}
		return true
	}, true
}
