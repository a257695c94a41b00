package events

import (
	"slices"
	"testing"
	"time"
)

// A provision change's notifications 200 ms apart over 0.8 s: the first
// is read at once, the four others once, when the second is up; a node
// quiet for a second is read at once again; other nodes are not held.
func TestCooldownReadsANodeOncePerInterval(t *testing.T) {
	c := NewCooldown(time.Second)
	t0 := time.Unix(1000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	read, deferred := c.Split(at(0), []string{"a"})
	if !slices.Equal(read, []string{"a"}) || len(deferred) != 0 {
		t.Fatalf("first notification: read %v, deferred %v; want a read at once", read, deferred)
	}
	reads := 1
	for ms := 200; ms <= 800; ms += 200 {
		read, _ := c.Split(at(ms), []string{"a", "b" + string(rune('0'+ms/200))})
		if slices.Contains(read, "a") {
			t.Fatalf("a read again at %d ms, within the cooldown", ms)
		}
		if len(read) != 1 {
			t.Fatalf("at %d ms: read %v; another node must not wait", ms, read)
		}
	}
	if next, ok := c.Next(); !ok || !next.Equal(at(1000)) {
		t.Fatalf("next due %v %v; want %v", next, ok, at(1000))
	}
	if due := c.Due(at(999)); len(due) != 0 {
		t.Fatalf("due before its time: %v", due)
	}
	if due := c.Due(at(1000)); !slices.Equal(due, []string{"a"}) {
		t.Fatalf("due at 1 s: %v; want [a]", due)
	}
	reads++
	if _, ok := c.Next(); ok {
		t.Fatal("nothing should be deferred after Due")
	}
	if read, _ := c.Split(at(2100), []string{"a"}); !slices.Equal(read, []string{"a"}) {
		t.Fatalf("a quiet for 1.1 s: read %v; want a read at once", read)
	}
	reads++
	if reads != 3 {
		t.Fatalf("%d reads", reads)
	}
}

// A cooldown of 0 defers nothing; and the nodes read long ago are
// forgotten, so memory follows the last interval's nodes.
func TestCooldownOffAndForgetting(t *testing.T) {
	off := NewCooldown(0)
	for range 3 {
		if read, d := off.Split(time.Unix(1, 0), []string{"a"}); len(read) != 1 || len(d) != 0 {
			t.Fatalf("cooldown 0: read %v deferred %v", read, d)
		}
	}
	c := NewCooldown(time.Second)
	for i := range 1000 {
		c.Split(time.Unix(int64(i), 0), []string{string(rune('a' + i%26)), "x" + string(rune(i))})
	}
	if n := len(c.last); n > 4 {
		t.Fatalf("%d nodes remembered; want only those of the last second", n)
	}
}
