package ironic

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/rpengine/rpengine/hostabi"
)

// MapEvent reads one of Ironic's versioned notifications (topic
// ironic_versioned_notifications): the node it concerns and when it
// happened. Only baremetal.node.* notifications name a node whose
// provider can change; the others (ports, allocations, deploy templates,
// conductors) map to no node. It trusts nothing in the message beyond the
// uuid: the engine re-reads the node from Ironic.
func MapEvent(msg hostabi.EventMessage) (hostabi.MappedEvent, error) {
	body := []byte(msg.Body)
	var env struct {
		Version string `json:"oslo.version"`
		Message string `json:"oslo.message"`
	}
	if err := json.Unmarshal(body, &env); err != nil {
		return hostabi.MappedEvent{}, fmt.Errorf("not a JSON object: %v", err)
	}
	if env.Version != "" { // oslo.messaging's envelope: the message is a JSON string inside
		body = []byte(env.Message)
	}
	var n struct {
		EventType string `json:"event_type"`
		Timestamp string `json:"timestamp"`
		Payload   struct {
			Data struct {
				UUID string `json:"uuid"`
			} `json:"ironic_object.data"`
		} `json:"payload"`
	}
	if err := json.Unmarshal(body, &n); err != nil {
		return hostabi.MappedEvent{}, fmt.Errorf("not a notification: %v", err)
	}
	e := hostabi.MappedEvent{Kind: clip(n.EventType), Nodes: []string{}}
	if n.EventType == "" {
		return e, errors.New("no event_type: not a versioned notification")
	}
	e.Time = notificationTime(n.Timestamp)
	if !strings.HasPrefix(n.EventType, "baremetal.node.") {
		return e, nil
	}
	if !hostabi.ValidUUID(n.Payload.Data.UUID) {
		return e, fmt.Errorf("%s without a node uuid in payload.ironic_object.data", e.Kind)
	}
	e.Nodes = []string{strings.ToLower(n.Payload.Data.UUID)}
	return e, nil
}

// notificationTime turns oslo's timestamp ("2026-12-01 18:00:00.123456",
// UTC, no zone) into RFC 3339; "" when it is not one.
func notificationTime(s string) string {
	for _, layout := range []string{"2006-01-02 15:04:05.999999", time.RFC3339Nano} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC().Format(time.RFC3339Nano)
		}
	}
	return ""
}
