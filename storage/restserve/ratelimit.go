package restserve

import (
	"math"
	"net"
	"net/http"
	"sync"
	"time"
)

// Failed sign-ins at the token endpoint are limited, so that a password
// cannot be guessed at the speed of the network: each client address, and
// each account named as client_id, may fail failureBurst times, and then
// once per failureRefill. A request from a client or for an account
// whose allowance is spent is answered 429 with Retry-After, without its
// credentials being checked. Successful sign-ins are not limited and do
// not spend the allowance; an account's allowance being spent by someone
// else's guesses locks its owner out of this endpoint only for as long
// (SigV4 and the static bearer credential still work).
const (
	failureBurst  = 10
	failureRefill = 6 * time.Second
	// maxLimited bounds the clients and accounts tracked; those whose
	// allowance is whole again are forgotten first.
	maxLimited = 1 << 16
)

// failureLimiter holds the failure allowance of each client address and
// account: a bucket of failureBurst credits that refills one credit per
// failureRefill.
type failureLimiter struct {
	mu      sync.Mutex
	buckets map[string]*failureBucket
}

type failureBucket struct {
	credits float64
	at      time.Time // when credits was computed
}

func newFailureLimiter() *failureLimiter {
	return &failureLimiter{buckets: map[string]*failureBucket{}}
}

// credits is b's allowance at now.
func (b *failureBucket) creditsAt(now time.Time) float64 {
	return math.Min(failureBurst, b.credits+now.Sub(b.at).Seconds()/failureRefill.Seconds())
}

// wait is how long the first spent key must wait for a credit, or 0 when
// every key may still fail.
func (l *failureLimiter) wait(now time.Time, keys ...string) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	var longest time.Duration
	for _, k := range keys {
		b, ok := l.buckets[k]
		if !ok {
			continue
		}
		if c := b.creditsAt(now); c < 1 {
			if d := time.Duration((1 - c) * float64(failureRefill)); d > longest {
				longest = d
			}
		}
	}
	return longest
}

// fail spends a credit of each key.
func (l *failureLimiter) fail(now time.Time, keys ...string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, k := range keys {
		b, ok := l.buckets[k]
		if !ok {
			if len(l.buckets) >= maxLimited {
				l.prune(now)
			}
			b = &failureBucket{credits: failureBurst, at: now}
			l.buckets[k] = b
		}
		b.credits, b.at = math.Max(0, b.creditsAt(now)-1), now
	}
}

// prune forgets the keys whose allowance is whole again, and every key if
// that frees nothing (a flood of addresses must not grow the map).
func (l *failureLimiter) prune(now time.Time) {
	for k, b := range l.buckets {
		if b.creditsAt(now) >= failureBurst {
			delete(l.buckets, k)
		}
	}
	if len(l.buckets) >= maxLimited {
		clear(l.buckets)
	}
}

// limitKeys are the keys a token request is limited by: its client
// address and, for a client-credentials grant naming an account, the
// account (a name that is no account gets none: guessing it is useless,
// and tracking every name sent would let a client grow the map).
func (t *Tokens) limitKeys(r *http.Request, id string) []string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	keys := []string{"addr " + host}
	if _, ok := t.accounts[id]; ok {
		keys = append(keys, "user "+id)
	}
	return keys
}
