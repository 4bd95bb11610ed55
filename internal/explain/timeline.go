package explain

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/report"
)

// timeline is an anomaly's transactions laid out in time, one row per session: each
// transaction a box from its beginning to its end with its operations inside, those that
// make a step of the proof marked in the step's color, and each step an arrow from the
// operation (or transaction) it starts at to the one it ends at.
//
// The horizontal axis keeps the order of events, not their distances: every beginning and
// end is a tick, ticks are placed left to right in time order, just far enough apart for
// the boxes between them to hold their text (as porcupine's timelines do). Which of two
// transactions ended first, and which overlapped, reads straight off the page; each tick
// is labelled with its time.
type timeline struct {
	W, H   float64
	Axis   string // what the horizontal axis is, in a sentence; "" when there is no timeline
	Rows   []tlRow
	Ticks  []tlTick
	Boxes  []tlBox
	Arrows []tlArrow
	Colors []string // one arrowhead marker per color, referenced by index
}

type tlRow struct {
	Y, H   float64
	Label  string
	LY     float64 // where the label is written
	Shaded bool    // every other row has a background
}

type tlTick struct {
	X      float64
	Label  string
	LY     float64 // where the label is written
	Y1, Y2 float64 // the gridline
}

type tlBox struct {
	X, Y, W, H float64
	Name       string
	NX, NY     float64 // where the name is written
	Lines      []tlLine
	Open       bool // the transaction never ended: its box is drawn open
	Title      string
}

// tlLine is one operation in a box (or a note, with no color): marked when Color is set.
type tlLine struct {
	X, Y   float64 // where the text starts (baseline)
	Text   string
	Color  string // the color of the first step it makes; "" for an operation that makes none
	Steps  string // the steps it makes, "1, 3"; "" if none
	Title  string // the whole operation and the steps' sentences
	HX, HY float64
	HW, HH float64 // the mark behind it
	Note   bool    // a line that is not an operation (timestamps, elision)
}

type tlArrow struct {
	D      string
	Color  string
	Marker int
	Title  string
}

const (
	tlCharW    = 7.3 // monospace advance at the timeline's font size (12px)
	tlLineH    = 16.0
	tlPad      = 6.0
	tlGap      = 14.0 // between a row's edge and its boxes
	tlMinTick  = 56.0 // the least distance between two ticks
	tlMaxOps   = 8    // operations a box shows; the rest are counted
	tlMaxChars = 42   // characters of an operation a box shows; the rest is in its tooltip
	tlTickH    = 16.0 // the height of one line of tick labels
)

// tlEvent is one end of a transaction's interval, as a comparable time: client time in
// nanoseconds, a database timestamp, or a position in the history.
type tlEvent struct{ a, b int64 }

func (e tlEvent) compare(f tlEvent) int { return cmp.Or(cmp.Compare(e.a, f.a), cmp.Compare(e.b, f.b)) }

// tlTxn is one transaction of the timeline as it is being laid out.
type tlTxn struct {
	t          Txn
	begin, end tlEvent
	open       bool // never ended (client time only)
	lines      []tlLine
	width      float64
}

// layoutTimeline lays out e's transactions in time (see [timeline]) by client time when
// the history records it, else by database timestamps, else in the order the history lists
// them. It is empty when h is unknown or e has fewer than two transactions in it.
func layoutTimeline(h *history.History, e Explanation) timeline {
	var tl timeline
	var txns []*tlTxn
	for _, t := range e.Txns {
		if t.tx != nil {
			txns = append(txns, &tlTxn{t: t})
		}
	}
	if h == nil || len(txns) < 2 {
		return tl // one transaction alone has nothing to be placed against
	}
	tl.Axis = tl.times(h, txns)
	marks := stepMarks(h, e)
	for _, x := range txns {
		x.lines = boxLines(h, x.t, marks[x.t.ID], tl.Axis != axisTimestamps)
		x.width = boxContentWidth(x)
	}
	xs := tl.placeTicks(txns)
	tl.placeRows(h, txns, xs)
	around := tl.drawArrows(e, txns)
	tl.W += 24 + 12*float64(around) // room for the arrows drawn around the right
	return tl
}

// The sentences that say what a timeline's axis is.
const (
	axisClient     = "Client time, since the history's earliest: each tick is a transaction beginning or ending, in the order they happened; ticks are spaced to fit the boxes, not to scale."
	axisTimestamps = "Database timestamps: each tick is a transaction's start or commit timestamp, in order; ticks are spaced to fit the boxes, not to scale."
	axisOrder      = "The history records no time: transactions are placed in the order the history lists them, one after another."
)

// times sets each transaction's beginning and end, and returns the axis sentence.
func (tl *timeline) times(h *history.History, txns []*tlTxn) string {
	switch {
	case slices.ContainsFunc(txns, func(x *tlTxn) bool { return x.t.tx.HasTime }):
		last := int64(math.MinInt64)
		for _, x := range txns {
			if tx := x.t.tx; tx.HasTime && tx.Time.End != math.MaxInt64 {
				last = max(last, tx.Time.End)
			}
		}
		for _, x := range txns {
			tx := x.t.tx
			if !tx.HasTime { // after every recorded time
				x.begin, x.end = tlEvent{last, 1}, tlEvent{last, 2}
				continue
			}
			x.begin, x.end = tlEvent{tx.Time.Begin, 0}, tlEvent{tx.Time.End, 0}
			if tx.Time.End == math.MaxInt64 {
				x.open, x.end = true, tlEvent{last, 3}
			}
		}
		return axisClient
	case slices.ContainsFunc(txns, func(x *tlTxn) bool { return x.t.tx.HasTimestamps }):
		for _, x := range txns {
			tx := x.t.tx
			if !tx.HasTimestamps {
				x.begin, x.end = tlEvent{math.MaxInt64, 0}, tlEvent{math.MaxInt64, 1}
				continue
			}
			x.begin, x.end = tlEvent{tx.Start.Physical, tx.Start.Logical}, tlEvent{tx.Commit.Physical, tx.Commit.Logical}
		}
		return axisTimestamps
	}
	order := slices.Clone(txns)
	slices.SortFunc(order, func(x, y *tlTxn) int { return cmp.Compare(x.t.ID, y.t.ID) })
	for i, x := range order {
		x.begin, x.end = tlEvent{int64(2 * i), 0}, tlEvent{int64(2*i + 1), 0}
	}
	return axisOrder
}

// tickLabel is what the tick at event ev says.
func tickLabel(h *history.History, axis string, ev tlEvent, x *tlTxn, isEnd bool) string {
	switch {
	case axis == axisOrder:
		return ""
	case axis == axisClient && x.t.tx.HasTime && !(isEnd && x.open):
		return sinceStart(h, ev.a)
	case axis == axisTimestamps && x.t.tx.HasTimestamps:
		if isEnd {
			return x.t.tx.Commit.String()
		}
		return x.t.tx.Start.String()
	}
	return ""
}

// opMark is one step an operation makes: the step's number (from 1) and its relation.
type opMark struct {
	step int
	rel  report.Rel
	s    Step
}

// stepMarks finds, for each step of e, the operation of its first transaction and of its
// second that make it, and returns them by transaction and operation index. Steps about
// order alone (session, real time, timestamps) mark no operation.
func stepMarks(h *history.History, e Explanation) map[history.TxnID]map[int][]opMark {
	marks := map[history.TxnID]map[int][]opMark{}
	tx := map[history.TxnID]*history.Txn{}
	for _, t := range e.Txns {
		if t.tx != nil {
			tx[t.ID] = t.tx
		}
	}
	add := func(t history.TxnID, op int, m opMark) {
		if op < 0 {
			return
		}
		if marks[t] == nil {
			marks[t] = map[int][]opMark{}
		}
		marks[t][op] = append(marks[t][op], m)
	}
	for i, s := range e.Steps {
		from, to := tx[s.FromID], tx[s.ToID]
		if from == nil || to == nil {
			continue
		}
		f, t := stepOps(h, s, from, to)
		m := opMark{step: i + 1, rel: s.Rel, s: s}
		add(s.FromID, f, m)
		add(s.ToID, t, m)
	}
	return marks
}

// stepOps returns the index of the operation of from and of to that make step s, -1 where
// none does (or no one operation can: an order relation).
func stepOps(h *history.History, s Step, from, to *history.Txn) (int, int) {
	if !s.hasKey {
		return -1, -1
	}
	v2 := s.val2Datum
	if !s.hasVal2 {
		v2 = s.valDatum
	}
	switch {
	case s.Rel&report.WW != 0:
		return writerOp(h, from, s.keyDatum, s.valDatum), writerOp(h, to, s.keyDatum, v2)
	case s.Rel&report.WR != 0:
		return writerOp(h, from, s.keyDatum, s.valDatum), readerOp(h, to, s.keyDatum, s.valDatum)
	case s.Rel&report.RW != 0:
		return readerOp(h, from, s.keyDatum, s.valDatum), writerOp(h, to, s.keyDatum, v2)
	case s.Rel&report.PredWR != 0:
		return writerOp(h, from, s.keyDatum, s.valDatum), predReaderOp(h, to, s.keyDatum)
	case s.Rel&report.PredRW != 0:
		return predReaderOp(h, from, s.keyDatum), writerOp(h, to, s.keyDatum, v2)
	}
	return -1, -1
}

// writerOp is the operation of t that wrote value v of key k: a write, append, insert,
// delete or predicate write of k, one with value v preferred, else the last.
func writerOp(h *history.History, t *history.Txn, k, v history.Datum) int {
	best := -1
	for i, o := range t.Ops {
		switch o.Kind {
		case history.OpWrite, history.OpAppend, history.OpInsert, history.OpDelete:
			if h.Key(o.Key).Compare(k) != 0 {
				continue
			}
			if o.Kind != history.OpDelete && h.Value(o.Value).Compare(v) == 0 {
				return i
			}
			best = i
		case history.OpPredWrite:
			if r, ok := predRow(h, o, k); ok {
				if h.Value(r.Value).Compare(v) == 0 {
					return i
				}
				best = i
			}
		}
	}
	return best
}

// readerOp is the operation of t that read value v of key k: a read of k with value v (a
// list read that holds v) preferred, else the first read of k, else a predicate read that
// returned k.
func readerOp(h *history.History, t *history.Txn, k, v history.Datum) int {
	first := -1
	for i, o := range t.Ops {
		if (o.Kind != history.OpRead && o.Kind != history.OpListRead) || h.Key(o.Key).Compare(k) != 0 {
			continue
		}
		if o.Kind == history.OpRead && h.Value(o.Value).Compare(v) == 0 {
			return i
		}
		if o.Kind == history.OpListRead && slices.ContainsFunc(h.List(o), func(e history.Value) bool { return h.Value(e).Compare(v) == 0 }) {
			return i
		}
		if first < 0 {
			first = i
		}
	}
	if first >= 0 {
		return first
	}
	return predReaderOp(h, t, k)
}

// predReaderOp is the predicate read of t that returned key k, else its first predicate
// read, else its first predicate write (which reads the rows it matches); -1 if none.
func predReaderOp(h *history.History, t *history.Txn, k history.Datum) int {
	first, write := -1, -1
	for i, o := range t.Ops {
		switch o.Kind {
		case history.OpPredRead:
			if _, ok := predRow(h, o, k); ok {
				return i
			}
			if first < 0 {
				first = i
			}
		case history.OpPredWrite:
			if write < 0 {
				write = i
			}
		}
	}
	if first >= 0 {
		return first
	}
	return write
}

// predRow is the row of key k a predicate operation lists.
func predRow(h *history.History, o history.Op, k history.Datum) (history.Row, bool) {
	for _, r := range h.Pred(o).Rows {
		if h.Key(r.Key).Compare(k) == 0 {
			return r, true
		}
	}
	return history.Row{}, false
}

// boxLines are the lines a transaction's box shows below its name: its operations (at
// most tlMaxOps: the marked ones, then the first of the others, with a line counting what
// was left out), each marked with the steps it makes, then its database timestamps when
// ts is set and it has them.
func boxLines(h *history.History, t Txn, marks map[int][]opMark, ts bool) []tlLine {
	ops := t.tx.Ops
	show := make([]bool, len(ops))
	n := 0
	for i := range ops {
		if len(marks[i]) > 0 {
			show[i] = true
			n++
		}
	}
	for i := range ops {
		if n >= tlMaxOps {
			break
		}
		if !show[i] {
			show[i] = true
			n++
		}
	}
	var lines []tlLine
	left := 0
	for i, o := range ops {
		if !show[i] {
			left++
			continue
		}
		if left > 0 {
			lines = append(lines, tlLine{Text: fmt.Sprintf("… %d more", left), Note: true})
			left = 0
		}
		lines = append(lines, opLine(Op(h, o), marks[i]))
	}
	if left > 0 {
		lines = append(lines, tlLine{Text: fmt.Sprintf("… %d more", left), Note: true})
	}
	if ts && t.Timestamps != "" {
		lines = append(lines, tlLine{Text: "ts " + t.Timestamps, Note: true})
	}
	return lines
}

// opLine is the line of operation text, marked with the steps ms it makes.
func opLine(text string, ms []opMark) tlLine {
	l := tlLine{Text: text, Title: text}
	if r := []rune(text); len(r) > tlMaxChars {
		l.Text = string(r[:tlMaxChars-1]) + "…"
	}
	if len(ms) == 0 {
		return l
	}
	l.Color = relColor(ms[0].rel)
	var nums, why []string
	for _, m := range ms {
		if n := fmt.Sprint(m.step); !slices.Contains(nums, n) { // a step from an op to itself
			nums = append(nums, n)
			why = append(why, fmt.Sprintf("step %d: %s", m.step, m.s.Sentence))
		}
	}
	l.Steps = strings.Join(nums, ", ")
	l.Title = text + "\n" + strings.Join(why, "\n")
	return l
}

// boxContentWidth is the width a transaction's box needs for its name and lines.
func boxContentWidth(x *tlTxn) float64 {
	w := textWidth(boxName(x.t))
	for _, l := range x.lines {
		lw := textWidth(l.Text)
		if l.Steps != "" {
			lw += textWidth(" ◂"+l.Steps) + 4
		}
		w = max(w, lw)
	}
	return w + 2*tlPad
}

// boxName is what a box's first line says: the transaction's name, and its outcome when it
// did not commit.
func boxName(t Txn) string {
	if t.Outcome != "" && t.Outcome != "committed" {
		return t.Name + " (" + t.Outcome + ")"
	}
	return t.Name
}

func textWidth(s string) float64 { return float64(len([]rune(s))) * tlCharW }

// placeTicks orders the transactions' beginnings and ends, gives each distinct one an x
// (left to right, at least tlMinTick apart, and every box's ends far enough apart for its
// text), and returns each event's x. Tick labels go on up to three lines, each on the
// first line where it does not run into the label before it.
func (tl *timeline) placeTicks(txns []*tlTxn) map[tlEvent]float64 {
	var evs []tlEvent
	for _, x := range txns {
		evs = append(evs, x.begin, x.end)
	}
	slices.SortFunc(evs, tlEvent.compare)
	evs = slices.Compact(evs)
	xs := make(map[tlEvent]float64, len(evs))
	for i, ev := range evs {
		at := 0.0
		if i > 0 {
			at = xs[evs[i-1]] + tlMinTick
		}
		for _, x := range txns {
			if x.end == ev && x.begin != ev {
				at = max(at, xs[x.begin]+x.width)
			}
		}
		xs[ev] = at
	}
	return xs
}

// placeRows gives each session a row (in the order the transactions are listed), puts
// each transaction's box in its row between the x of its beginning and its end, then the
// ticks, and sizes the drawing.
func (tl *timeline) placeRows(h *history.History, txns []*tlTxn, xs map[tlEvent]float64) {
	left := 0.0
	var sessions []string
	rowOf := map[string]int{}
	for _, x := range txns {
		s := x.t.Session
		if _, ok := rowOf[s]; !ok {
			rowOf[s] = len(sessions)
			sessions = append(sessions, s)
			left = max(left, textWidth("session "+s))
		}
	}
	left += 24
	labels := tl.tickLabels(h, txns, xs, left)
	top := float64(labels)*tlTickH + 8
	heights := make([]float64, len(sessions))
	for _, x := range txns {
		r := rowOf[x.t.Session]
		heights[r] = max(heights[r], boxHeight(x))
	}
	y := top
	rowY := make([]float64, len(sessions))
	for r, s := range sessions {
		rh := heights[r] + 2*tlGap
		rowY[r] = y
		tl.Rows = append(tl.Rows, tlRow{Y: y, H: rh, Label: "session " + s, LY: y + rh/2, Shaded: r%2 == 0})
		y += rh
	}
	right := 0.0
	for _, x := range txns {
		bx := left + xs[x.begin]
		bw := max(xs[x.end]-xs[x.begin], x.width)
		by := rowY[rowOf[x.t.Session]] + tlGap
		tl.Boxes = append(tl.Boxes, box(x, bx, by, bw))
		right = max(right, bx+bw)
	}
	for i := range tl.Ticks {
		tl.Ticks[i].Y1, tl.Ticks[i].Y2 = top-4, y
	}
	tl.W, tl.H = right, y+4
}

// tickLabels adds a tick per event and returns on how many lines their labels went.
func (tl *timeline) tickLabels(h *history.History, txns []*tlTxn, xs map[tlEvent]float64, left float64) int {
	labels := map[tlEvent]string{}
	for _, x := range txns {
		for _, end := range []bool{false, true} {
			ev := x.begin
			if end {
				ev = x.end
			}
			if l := tickLabel(h, tl.Axis, ev, x, end); l != "" && labels[ev] == "" {
				labels[ev] = l
			}
		}
	}
	var evs []tlEvent
	for ev := range xs {
		evs = append(evs, ev)
	}
	slices.SortFunc(evs, tlEvent.compare)
	ends := []float64{math.Inf(-1), math.Inf(-1), math.Inf(-1)}
	used := 0
	for _, ev := range evs {
		t := tlTick{X: left + xs[ev]}
		if l := labels[ev]; l != "" {
			w := textWidth(l)
			for line := range ends {
				if t.X-w/2 > ends[line]+6 {
					t.Label, t.LY = l, float64(line+1)*tlTickH-3
					ends[line] = t.X + w/2
					used = max(used, line+1)
					break
				}
			}
		}
		tl.Ticks = append(tl.Ticks, t)
	}
	return used
}

func boxHeight(x *tlTxn) float64 { return 2*tlPad + tlLineH*float64(1+len(x.lines)) }

// box is the box of transaction x at (bx, by), bw wide, with its lines placed.
func box(x *tlTxn, bx, by, bw float64) tlBox {
	b := tlBox{X: bx, Y: by, W: bw, H: boxHeight(x), Name: boxName(x.t), NX: bx + tlPad, NY: by + tlPad + tlLineH - 4, Open: x.open, Title: txnTitle(x.t)}
	if x.open {
		b.Title += " (never ended)"
	}
	for i, l := range x.lines {
		l.X = bx + tlPad
		l.Y = by + tlPad + tlLineH*float64(i+2) - 4
		l.HX, l.HY, l.HW, l.HH = bx+2, l.Y-tlLineH+4, bw-4, tlLineH
		b.Lines = append(b.Lines, l)
	}
	return b
}

// drawArrows draws each step from the operation of its first transaction that makes it
// (its box, for an order relation) to that of its second, and returns how many it drew
// around the right of overlapping boxes.
func (tl *timeline) drawArrows(e Explanation, txns []*tlTxn) int {
	boxes := map[history.TxnID]*tlBox{}
	for i, x := range txns {
		boxes[x.t.ID] = &tl.Boxes[i]
	}
	marker := map[string]int{}
	around := 0 // arrows drawn around the right of overlapping boxes so far
	for i, s := range e.Steps {
		a, b := boxes[s.FromID], boxes[s.ToID]
		if a == nil || b == nil {
			continue
		}
		color := relColor(s.Rel)
		m, ok := marker[color]
		if !ok {
			m = len(tl.Colors)
			marker[color] = m
			tl.Colors = append(tl.Colors, color)
		}
		ya, yb := markedY(a, i+1), markedY(b, i+1)
		tl.Arrows = append(tl.Arrows, tlArrow{D: arrowPath(a, b, ya, yb, &around), Color: color, Marker: m, Title: fmt.Sprintf("step %d: %s", i+1, s.Sentence)})
	}
	return around
}

// markedY is the height of the line of box b marked with step n, or of its name (a step
// no one operation makes, such as real time, joins the transactions as wholes).
func markedY(b *tlBox, n int) float64 {
	for _, l := range b.Lines {
		if strings.Contains(", "+l.Steps+", ", ", "+fmt.Sprint(n)+", ") {
			return l.HY + l.HH/2
		}
	}
	return b.NY - 4
}

// arrowPath is a curve from box a at height ya to box b at height yb: from a's right side
// to b's left when b lies to the right, the other way round when to the left, and around
// the right of both when they overlap in time, each such arrow (counted by around) a little
// further out than the one before.
func arrowPath(a, b *tlBox, ya, yb float64, around *int) string {
	const out = 28.0
	var c curve
	switch {
	case a == b: // a loop on the right
		x := a.X + a.W
		c = curve{{x, ya - 3}, {x + out, ya - 16}, {x + out, yb + 16}, {x + 2, yb + 3}}
	case b.X >= a.X+a.W-1:
		x1, x2 := a.X+a.W, b.X-2
		d := max(out, (x2-x1)/2)
		c = curve{{x1, ya}, {x1 + d, ya}, {x2 - d, yb}, {x2, yb}}
	case b.X+b.W <= a.X+1:
		x1, x2 := a.X, b.X+b.W+2
		d := max(out, (x1-x2)/2)
		c = curve{{x1, ya}, {x1 - d, ya}, {x2 + d, yb}, {x2, yb}}
	default:
		x1, x2 := a.X+a.W, b.X+b.W+2
		r := max(x1, x2) + 16 + 12*float64(*around)
		*around++
		c = curve{{x1, ya}, {r, ya}, {r, yb}, {x2, yb}}
	}
	return c.path()
}
