package server

import (
	"sync"
	"sync/atomic"
)

// hub fans violation lines out to streaming clients. A slow client loses lines (counted)
// rather than slowing the checker.
type hub struct {
	mu      sync.Mutex
	subs    map[chan []byte]struct{}
	ring    [][]byte
	next    int
	byKind  map[string]int64
	dropped atomic.Int64
}

const ringSize = 1000

func (h *hub) init() {
	h.subs = map[chan []byte]struct{}{}
	h.byKind = map[string]int64{}
}

func (h *hub) publish(kind string, line []byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if kind != "" {
		h.byKind[kind]++
	}
	if len(h.ring) < ringSize {
		h.ring = append(h.ring, line)
	} else {
		h.ring[h.next] = line
		h.next = (h.next + 1) % ringSize
	}
	for ch := range h.subs {
		select {
		case ch <- line:
		default:
			h.dropped.Add(1)
		}
	}
}

func (h *hub) subscribe(replay bool) (chan []byte, [][]byte) {
	ch := make(chan []byte, 4096)
	h.mu.Lock()
	defer h.mu.Unlock()
	h.subs[ch] = struct{}{}
	var backlog [][]byte
	if replay {
		backlog = append(backlog, h.ring[h.next:]...)
		backlog = append(backlog, h.ring[:h.next]...)
	}
	return ch, backlog
}

func (h *hub) unsubscribe(ch chan []byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.subs, ch)
}

func (h *hub) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.subs)
}

func (h *hub) kinds() map[string]int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	m := make(map[string]int64, len(h.byKind))
	for k, v := range h.byKind {
		m[k] = v
	}
	return m
}
