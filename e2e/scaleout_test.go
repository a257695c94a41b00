package e2e

import (
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"
)

// Three engines divide a fleet through a real etcd; one is killed, its
// nodes go to the others within two intervals (woken by etcd, they do not
// wait for theirs); it comes back and the
// division settles back. Throughout, no provider is deleted and none is
// written by two engines in turns.
func TestScaleOutKillAndRestart(t *testing.T) { scaleOutKillAndRestart(t, newScaleRig(t, 0x5ca1e1)) }

func scaleOutKillAndRestart(t *testing.T, r *scaleRig) {
	ids := []string{r.id(1), r.id(2), r.id(3)}
	for n := 1; n <= 3; n++ {
		r.start(n)
	}
	r.waitSettled(30*time.Second, ids...)
	r.waitQuiet()

	held := 0
	for _, o := range r.owners(ids...) {
		if len(o) == 1 && o[0] == ids[0] {
			held++
		}
	}
	if held == 0 {
		t.Fatalf("%s manages no provider before the kill", ids[0])
	}
	killed := time.Now()
	r.kill(1)
	deadline := killed.Add(2 * soInterval)
	for {
		owners := r.owners(ids...)
		left := 0
		for uuid := range r.desired {
			if o := owners[uuid]; len(o) != 1 || o[0] == ids[0] {
				left++
			}
		}
		if left == 0 {
			t.Logf("the dead engine's %d providers were managed again %s after the kill", held, time.Since(killed).Round(time.Millisecond))
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d providers not managed by a live engine %s after the kill (two intervals)", left, 2*soInterval)
		}
		time.Sleep(100 * time.Millisecond)
	}
	r.waitSettled(3*soInterval, ids[1:]...)
	// The survivors did not wait for their interval: etcd's expiry of the
	// dead lease woke them (coord.Watch).
	for _, id := range ids[1:] {
		if b, _ := os.ReadFile(r.engines[id].logPath); !strings.Contains(string(b), "peers changed in etcd") {
			t.Errorf("%s was not woken by the dead engine's expiry", id)
		}
	}
	r.waitQuiet()

	r.start(1)
	r.waitSettled(6*soInterval, ids...)
	st := r.status()
	if len(st.Moves) == 0 || !strings.Contains(fmt.Sprint(st.Moves), "acquired") {
		t.Errorf("status shows no moves: %+v", st.Moves)
	}
	r.log.checkNoDeletes(t)
	r.log.checkNoPingPong(t, soInterval, time.Time{})
	r.checkDesired(ids...)
}

// An engine cut off from etcd stops writing within its lease, though its
// providers need repair; the others take them over and repair them; when
// it is back it gets its share again.
func TestScaleOutEngineCutOffFromEtcd(t *testing.T) { scaleOutCutOff(t, newScaleRig(t, 0x5ca1e2)) }

func scaleOutCutOff(t *testing.T, r *scaleRig) {
	ids := []string{r.id(1), r.id(2), r.id(3)}
	for n := 1; n <= 3; n++ {
		r.start(n)
	}
	r.waitSettled(30*time.Second, ids...)
	r.waitQuiet()

	cutOff := r.engines[ids[0]]
	logAtCut := fileSize(t, cutOff.logPath)
	cut := time.Now()
	cutOff.etcd.Sever()
	// Once its lease may have ended, damage its providers: an engine
	// still writing would repair them at its next cycle.
	time.Sleep(soTTL)
	tampered := 0
	for uuid, o := range r.owners(ids...) {
		if len(o) == 1 && o[0] == ids[0] {
			dropTrait(t, r.placement, uuid, "COMPUTE_NODE")
			tampered++
		}
	}
	if tampered == 0 {
		t.Fatalf("%s held no provider when cut off", ids[0])
	}
	t.Logf("cut off %s; removed COMPUTE_NODE from %d of its providers", ids[0], tampered)
	r.waitSettled(4*soInterval, ids[1:]...)
	if ws := r.log.writesBy(ids[0], cut.Add(soTTL)); len(ws) > 0 {
		t.Fatalf("the cut-off engine wrote after its lease could have expired: %v", ws)
	}
	// It kept trying, and was refused by its own fence, not by chance.
	for deadline := time.Now().Add(3 * soInterval); ; time.Sleep(200 * time.Millisecond) {
		since := readFrom(t, cutOff.logPath, logAtCut)
		if strings.Contains(since, "no writes this cycle") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the cut-off engine logged no refused cycle:\n%s", tailString(since, 3000))
		}
	}
	if ws := r.log.writesBy(ids[0], cut.Add(soTTL)); len(ws) > 0 {
		t.Fatalf("the cut-off engine wrote after its lease could have expired: %v", ws)
	}

	healed := time.Now()
	r.engines[ids[0]].etcd.Heal()
	r.waitSettled(6*soInterval, ids...)
	r.log.checkNoDeletes(t)
	// From the heal on: the engine cut off takes its share back, once
	// (its writes before the cut and its peers' during it are a
	// hand-over each way, not a fight).
	r.log.checkNoPingPong(t, soInterval, healed)
	r.checkDesired(ids...)
}

func fileSize(t *testing.T, path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

func readFrom(t *testing.T, path string, off int64) string {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b[off:])
}

// dropTrait removes one trait from a provider, as an operator might.
func dropTrait(t *testing.T, base, uuid, trait string) {
	t.Helper()
	var cur struct {
		Traits     []string `json:"traits"`
		Generation int64    `json:"resource_provider_generation"`
	}
	placementGet(t, base, "/resource_providers/"+uuid+"/traits", &cur)
	var keep []string
	for _, tr := range cur.Traits {
		if tr != trait {
			keep = append(keep, tr)
		}
	}
	body := fmt.Sprintf(`{"traits": [%s], "resource_provider_generation": %d}`, quoteAll(keep), cur.Generation)
	req, _ := http.NewRequest("PUT", base+"/resource_providers/"+uuid+"/traits", strings.NewReader(body))
	req.Header.Set("X-Auth-Token", "admin")
	req.Header.Set("OpenStack-API-Version", "placement 1.39")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 && resp.StatusCode != 409 { // 409: an engine wrote first; fine
		t.Fatalf("PUT traits of %s: %d", uuid, resp.StatusCode)
	}
}

func quoteAll(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, ", ")
}
