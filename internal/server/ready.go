package server

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strconv"

	"github.com/isovet/isovet/anomaly"
	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/jsonscan"
)

// OnlineReady says why h cannot be checked online as it would be offline, or nil. The
// online checker places every committed transaction by its database start and commit
// timestamps, takes each transaction as committed or not when it arrives, reads key-value
// operations only, and starts every key at one initial value; a history that lacks one
// of these would be refused batch by batch, or worse, checked into false alarms or missed
// violations. Aborted transactions are no obstacle: they are simply not sent.
func OnlineReady(h *history.History) error {
	var untimed, unknown, preds, failed []history.TxnID
	committed := 0
	for i := range h.Txns {
		t := &h.Txns[i]
		id := history.TxnID(i)
		switch {
		case t.Outcome == history.OutcomeUnknown:
			unknown = append(unknown, id)
			continue
		case !t.Committed():
			continue
		}
		committed++
		if !t.HasTimestamps {
			untimed = append(untimed, id)
		}
		if slices.ContainsFunc(t.Ops, func(o history.Op) bool { return o.Kind == history.OpPredRead || o.Kind == history.OpPredWrite }) {
			preds = append(preds, id)
		}
		if slices.ContainsFunc(t.Ops, history.Op.Failed) {
			failed = append(failed, id)
		}
	}
	switch {
	case committed == 0:
		return fmt.Errorf("the history has no committed transaction: there is nothing to check online")
	case len(untimed) > 0:
		return fmt.Errorf("%d of the history's %d committed transactions (%s) have no database start and commit timestamps, which the online checker places every transaction by; the format records none, or the database gave none: check it offline with isovet check", len(untimed), committed, names(h, untimed))
	case len(unknown) > 0:
		return fmt.Errorf("%d transactions (%s) have an unknown outcome: the offline check takes such a transaction as committed when a read saw what only it wrote, but the online checker must decide when it arrives, and a read of it would be a false alarm; check the history offline with isovet check", len(unknown), names(h, unknown))
	case len(preds) > 0:
		return fmt.Errorf("%d committed transactions (%s) hold predicate reads or writes, which the online checker does not read: a violation through them would be missed; check the history offline with isovet check", len(preds), names(h, preds))
	case len(failed) > 0:
		return fmt.Errorf("%d committed transactions (%s) hold a failed statement: whether the database committed them without it or rolled them back is the recorder's to say, and the service refuses them; check the history offline with isovet check", len(failed), names(h, failed))
	}
	if _, ok := uniformInitial(h); !ok {
		return fmt.Errorf("the history's keys start at different values (%s): the online checker starts every key at one value (serve --initial-value); check the history offline with isovet check", initialSample(h))
	}
	return nil
}

// names names the first few of ts for a message.
func names(h *history.History, ts []history.TxnID) string {
	s := ""
	for i, t := range ts[:min(len(ts), 3)] {
		if i > 0 {
			s += ", "
		}
		s += h.Name(t)
	}
	if len(ts) > 3 {
		s += ", …"
	}
	return "first " + s
}

// uniformInitial returns the one value every key of h starts at, and false when keys
// start at different values. A per-key value that every key read or written agrees on
// counts: lists start at nil, declared per key.
func uniformInitial(h *history.History) (history.Datum, bool) {
	if len(h.InitialByKey) == 0 {
		return h.Value(h.Initial), true
	}
	var v history.Value
	first := true
	for k := range h.Keys {
		w := h.InitialValue(history.Key(k))
		if !first && w != v {
			return history.NilDatum, false
		}
		v, first = w, false
	}
	if first {
		return h.Value(h.Initial), true
	}
	return h.Value(v), true
}

// initialSample names two keys of h that start at different values.
func initialSample(h *history.History) string {
	k0 := history.Key(0)
	for k := range h.Keys {
		if h.InitialValue(history.Key(k)) != h.InitialValue(k0) {
			return fmt.Sprintf("%v at %v, %v at %v", h.Key(k0), h.Value(h.InitialValue(k0)), h.Key(history.Key(k)), h.Value(h.InitialValue(history.Key(k))))
		}
	}
	return "?"
}

// WithIDs returns h with an id on every transaction, as the service needs to recognise a
// transaction sent twice: a transaction without one gets "T<n>", n its position in the
// history (the name reports give it). h is not changed; a history whose every
// transaction has an id is returned as it is. An id so assigned that another transaction
// already has is an error.
func WithIDs(h *history.History) (*history.History, error) {
	if !slices.ContainsFunc(h.Txns, func(t history.Txn) bool { return t.Source.IsNil() }) {
		return h, nil
	}
	taken := make(map[history.Datum]history.TxnID)
	for i := range h.Txns {
		if d := h.Txns[i].Source; !d.IsNil() {
			taken[d] = history.TxnID(i)
		}
	}
	c := *h
	c.Txns = slices.Clone(h.Txns)
	for i := range c.Txns {
		if !c.Txns[i].Source.IsNil() {
			continue
		}
		d := AssignedID(i)
		if j, ok := taken[d]; ok {
			return nil, fmt.Errorf("transaction %d has no id, and the id it would get, %v, is transaction %d's: give every transaction an id, or none", i, d, j)
		}
		c.Txns[i].Source = d
	}
	return &c, nil
}

// AssignedID is the id a transaction without one gets when sent to the service: "T<n>",
// n its position in the history, which is how reports name it.
func AssignedID(n int) history.Datum { return history.Str("T" + strconv.Itoa(n)) }

// agree asks the service at base for its initial value and level and fails, before
// anything is sent, when the service would judge the history otherwise than the offline
// check: it starts keys at another value than want, the history's (every read of an
// untouched key would be judged against the wrong value), or, with derived timestamps,
// it checks serializability ([orderChosen]). A service that does not say is trusted,
// with a warning.
func agree(ctx context.Context, c *http.Client, base, token string, want history.Datum, derived bool, log *slog.Logger) error {
	st, err := serviceStatus(ctx, c, base, token)
	if err != nil {
		return err
	}
	if derived && orderChosen(st.Level) {
		return errDerivedSer(st.Level)
	}
	if len(st.Initial) == 0 {
		log.Warn("the service does not say its initial value; it must be this one", "initial_value", want.String())
		return nil
	}
	if w := string(jsonscan.AppendDatum(nil, want)); string(st.Initial) != w {
		flag := w
		if str, ok := want.Str(); ok {
			flag = strconv.Quote(str)
		}
		return fmt.Errorf("the history starts every key at %s, the service at %s: reads of untouched keys would be judged against the wrong value; restart isovet serve with --initial-value %s", w, st.Initial, flag)
	}
	return nil
}

// orderChosen reports whether the service's level judges transactions by their commit
// order among concurrent ones (serializability: each reads at its commit), which
// timestamps derived from snapshots do not give: isovet chose it.
func orderChosen(level string) bool {
	l, ok := anomaly.ParseLevel(level)
	return ok && (l == anomaly.Serializable || l == anomaly.StrongSessionSerializable)
}

// errDerivedSer is the refusal of a history with derived timestamps by a service checking
// level, a serializable one.
func errDerivedSer(level string) error {
	return fmt.Errorf("the history's timestamps were derived from the database's snapshots, which do not say in which order concurrent transactions committed, and the service checks %s, which judges that order: it would report violations of the order isovet chose, which the offline check withdraws; serve at snapshot-isolation, or check serializability offline (isovet check --method black-box)", level)
}

// serviceState is what the service at base says of itself that replay needs.
type serviceState struct {
	Level   string          `json:"level"`
	Initial json.RawMessage `json:"initial_value"` // "null" when null, empty when absent
}

// serviceStatus reads the service's level and initial value from its status, with token
// when the service requires one.
func serviceStatus(ctx context.Context, c *http.Client, base, token string) (serviceState, error) {
	var st serviceState
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/v1/status", nil)
	if err != nil {
		return st, err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := c.Do(req)
	if err != nil {
		return st, fmt.Errorf("asking the service at %s for its status: %w", base, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return st, fmt.Errorf("asking the service at %s for its status: %s", base, resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		return st, fmt.Errorf("reading the status of the service at %s: %w", base, err)
	}
	return st, nil
}
