package placementfake

import (
	"net/http"
)

// totalUsagesRoute is GET /usages?project_id=[&user_id=][&consumer_type=]
// (1.9+), as handlers/usage.py get_total_usages: sums per class, and from
// 1.38 grouped by consumer type with a consumer_count.
var totalUsagesRoute = methods{"GET": {policy: "usages", serve: (*Server).getTotalUsages}}

func (s *Server) getTotalUsages(c *call) {
	if c.minor < 9 {
		c.fail(http.StatusNotFound, "", "The resource could not be found.")
		return
	}
	q := c.r.URL.Query()
	project := q.Get("project_id")
	if project == "" {
		c.fail(http.StatusBadRequest, "", "'project_id' is a required property")
		return
	}
	user, kind := q.Get("user_id"), q.Get("consumer_type")
	s.mu.Lock()
	defer s.mu.Unlock()
	flat := map[string]int64{}
	byType := map[string]map[string]int64{}
	for _, con := range s.st.consumers {
		if con.project != project || user != "" && con.user != user || len(con.allocs) == 0 {
			continue
		}
		t := con.kind
		if t == "" {
			t = "unknown"
		}
		if c.minor >= 38 && kind != "" && kind != "all" && kind != t {
			continue
		}
		if byType[t] == nil {
			byType[t] = map[string]int64{}
		}
		byType[t]["consumer_count"]++
		for _, res := range con.allocs {
			for rc, n := range res {
				flat[rc] += n
				byType[t][rc] += n
			}
		}
	}
	if c.minor >= 38 {
		c.reply(http.StatusOK, map[string]any{"usages": byType})
		return
	}
	c.reply(http.StatusOK, map[string]any{"usages": flat})
}
