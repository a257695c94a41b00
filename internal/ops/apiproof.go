package ops

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
)

// A verb that asks the daemon's API sends a fresh nonce in
// ChallengeHeader; the daemon answers with ProofHeader, the HMAC of the
// nonce under the key it wrote at start, mode 0600, beside its state
// file. Only a process that can read that file (the daemon, or its user)
// can prove itself: another program bound to server.listen while the
// daemon is down cannot pass its plan off as the engine's.
const (
	ChallengeHeader = "Rpengine-Challenge"
	ProofHeader     = "Rpengine-Proof"
	maxChallenge    = 128
)

// Proof is the answer to nonce under key.
func Proof(key []byte, nonce string) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(nonce))
	return hex.EncodeToString(m.Sum(nil))
}

// prove answers a challenge with the API's key; without a key (or a
// challenge) it adds nothing, and the verb does not trust the answer.
func (o *Ops) prove(w http.ResponseWriter, r *http.Request) {
	nonce := r.Header.Get(ChallengeHeader)
	if nonce == "" || len(nonce) > maxChallenge {
		return
	}
	o.api.mu.Lock()
	var key []byte
	if o.api.api != nil {
		key = o.api.api.Key
	}
	o.api.mu.Unlock()
	if len(key) > 0 {
		w.Header().Set(ProofHeader, Proof(key, nonce))
	}
}
