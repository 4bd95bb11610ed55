package server

import (
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Safety defaults (see [Options]).
const (
	defaultReadHeaderTimeout = 10 * time.Second
	defaultReadTimeout       = time.Minute
	defaultIdleTimeout       = 2 * time.Minute
	maxHeaderBytes           = 64 << 10
	// minBodyBudget is the smallest budget for request bodies a memory bound gives.
	minBodyBudget = 4 << 20
	// pooledBody is the largest body buffer kept for reuse: a request starts with at most
	// this much, so a client that sends a byte and stalls holds little.
	pooledBody = 256 << 10
)

// bodyBudget returns the budget for request bodies held at once under a memory bound: an
// eighth of it (the checker keeps to half, and decoding a body takes a few times its
// size), at least 4 MiB; 0 (no budget) when the memory is unbounded.
func bodyBudget(bound int64) int64 {
	if bound <= 0 {
		return 0
	}
	return max(bound/8, minBodyBudget)
}

// budget charges request bodies against a number of bytes as they arrive: a body holds
// the buffer it has filled, not what its Content-Length declares.
type budget struct {
	limit int64 // 0: unlimited (only counted)
	used  atomic.Int64
}

// take charges n bytes; false (nothing charged) if that would pass the limit.
func (b *budget) take(n int64) bool {
	for {
		u := b.used.Load()
		if b.limit > 0 && u+n > b.limit {
			return false
		}
		if b.used.CompareAndSwap(u, u+n) {
			return true
		}
	}
}

// give returns n bytes charged by take.
func (b *budget) give(n int64) { b.used.Add(-n) }

var (
	// errTooLarge: the body is over the largest body accepted.
	errTooLarge = errors.New("body too large")
	// errBusy: the bodies being received fill the budget.
	errBusy = errors.New("bodies in flight fill the memory budget")
)

// body is a request body read against a budget; release returns its memory and charge.
type body struct {
	b       []byte
	charged int64
	bud     *budget
}

var bodyPool sync.Pool // of *[]byte, at most pooledBody each

// readBody reads r, at most limit bytes, into memory charged to bud as it grows (it
// doubles, so the charge is under twice what arrived). hint is the declared length (or
// -1). It fails with errTooLarge past limit and errBusy when bud is exhausted; the caller
// releases the body either way.
func readBody(r io.Reader, limit, hint int64, bud *budget) (*body, error) {
	bd := &body{bud: bud}
	if p, ok := bodyPool.Get().(*[]byte); ok {
		bd.b = (*p)[:0]
	} else {
		bd.b = make([]byte, 0, min(max(hint+1, 4<<10), 64<<10))
	}
	if !bud.take(int64(cap(bd.b))) {
		bd.b = nil
		return bd, errBusy
	}
	bd.charged = int64(cap(bd.b))
	for {
		if len(bd.b) == cap(bd.b) {
			if int64(len(bd.b)) > limit {
				return bd, errTooLarge
			}
			if err := bd.grow(limit); err != nil {
				return bd, err
			}
		}
		n, err := r.Read(bd.b[len(bd.b):cap(bd.b)])
		bd.b = bd.b[:len(bd.b)+n]
		if int64(len(bd.b)) > limit {
			return bd, errTooLarge
		}
		if err == io.EOF {
			return bd, nil
		}
		if err != nil {
			return bd, err
		}
	}
}

// grow doubles the buffer (up to one byte past limit, to see a body over it), charging the
// new buffer before it is allocated.
func (bd *body) grow(limit int64) error {
	c := min(max(2*int64(cap(bd.b)), 64<<10), limit+1)
	if !bd.bud.take(c) {
		return errBusy
	}
	nb := make([]byte, len(bd.b), c)
	copy(nb, bd.b)
	bd.bud.give(bd.charged)
	bd.b, bd.charged = nb, c
	return nil
}

// release returns the body's charge, and its buffer to the pool if small.
func (bd *body) release() {
	if bd == nil {
		return
	}
	bd.bud.give(bd.charged)
	bd.charged = 0
	if bd.b != nil && cap(bd.b) <= pooledBody {
		b := bd.b[:0]
		bodyPool.Put(&b)
	}
	bd.b = nil
}

// failBody answers a body that could not be read: too large, busy, or cut off.
func (s *Server) failBody(w http.ResponseWriter, err error) {
	w.Header().Set("Connection", "close") // the rest of the body is not read
	switch {
	case errors.Is(err, errTooLarge):
		s.fail(w, http.StatusRequestEntityTooLarge, "too_large", fmt.Errorf("body larger than %d bytes; send smaller batches", s.maxBody))
	case errors.Is(err, errBusy):
		w.Header().Set("Retry-After", "1")
		s.fail(w, http.StatusServiceUnavailable, "busy", fmt.Errorf("the server is receiving %d bytes of request bodies, its budget (an eighth of --max-memory); retry shortly", s.bodies.limit))
	default:
		s.fail(w, http.StatusBadRequest, "bad_body", fmt.Errorf("reading body: %w", err))
	}
}

// ingestTypes are the content types POST /v1/txns accepts. None is one a web page may send
// to another origin without asking it first (a "simple request": text/plain, form data),
// so a page the operator opens cannot post transactions.
var ingestTypes = map[string]bool{"application/json": true, "application/x-ndjson": true, "application/jsonl": true}

// checkIngestType refuses a POST whose Content-Type is not JSON.
func checkIngestType(r *http.Request) error {
	ct := r.Header.Get("Content-Type")
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil || !ingestTypes[mt] {
		return fmt.Errorf("the Content-Type %q is not JSON: send application/json (a Chronos JSON array or native JSON lines; application/x-ndjson is accepted too)", ct)
	}
	return nil
}

// guard wraps the API with the checks every request passes: the token, when the server
// has one (Authorization: Bearer, or ?token= for the status page and its streams, which a
// browser opens without headers); without one (and unless insecure), a Host that names the
// loopback interface (a page whose name was made to resolve to 127.0.0.1, DNS rebinding,
// names its own host); and no Origin but the server's own (a page elsewhere may not use
// the API).
func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.opts.Token != "" {
			if !s.tokenOK(r) {
				w.Header().Set("WWW-Authenticate", `Bearer realm="isovet"`)
				s.fail(w, http.StatusUnauthorized, "unauthorized", errors.New("a token is required: Authorization: Bearer TOKEN (the server's --token or ISOVET_TOKEN)"))
				return
			}
		} else if !s.opts.Insecure && !loopbackHost(r.Host) {
			s.fail(w, http.StatusForbidden, "bad_host", fmt.Errorf("the Host %q is not a loopback address: without a token the server answers only requests to 127.0.0.1, ::1 or localhost", r.Host))
			return
		}
		if o := r.Header.Get("Origin"); o != "" && !sameOrigin(o, r.Host) {
			s.fail(w, http.StatusForbidden, "cross_origin", fmt.Errorf("the Origin %q is not this server's: cross-origin requests are refused", o))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// tokenOK says whether r carries the server's token, compared in constant time.
func (s *Server) tokenOK(r *http.Request) bool {
	got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok {
		got = r.URL.Query().Get("token")
	}
	return got != "" && subtle.ConstantTimeCompare([]byte(got), []byte(s.opts.Token)) == 1
}

// sameOrigin says whether an Origin header names the server at host (its Host header),
// over http or https.
func sameOrigin(origin, host string) bool {
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Path != "" && u.Path != "/" {
		return false
	}
	return strings.EqualFold(u.Host, host)
}

// loopbackHost says whether a Host header names the loopback interface: localhost, or a
// loopback IP, with any port.
func loopbackHost(host string) bool {
	h := host
	if hh, _, err := net.SplitHostPort(host); err == nil {
		h = hh
	}
	h = strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// loopbackAddr says whether a listen address binds only the loopback interface.
func loopbackAddr(addr string) bool {
	h, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// ErrNoToken is the refusal to listen beyond the loopback interface without a token.
var ErrNoToken = errors.New("listening beyond the loopback interface needs a token (--token or ISOVET_TOKEN), or --insecure to serve anyone who can connect")

// checkExposure refuses a listen address beyond loopback without a token, unless the
// options say insecure (then it warns).
func (s *Server) checkExposure(addr string) error {
	if loopbackAddr(addr) || s.opts.Token != "" {
		return nil
	}
	if !s.opts.Insecure {
		return fmt.Errorf("%s: %w", addr, ErrNoToken)
	}
	s.log.Warn("INSECURE: serving beyond the loopback interface without a token; anyone who can connect can post transactions and read violations", "addr", addr)
	return nil
}
