package explain

import (
	"fmt"
	"math"

	"github.com/isovet/isovet/history"
)

// svgGraph is an anomaly's cycle, laid out: the transactions its steps join as boxes on a
// circle, each step an arrow, each arrow's label on a box of its own.
type svgGraph struct {
	X, Y, W, H float64 // the view box
	Nodes      []svgNode
	Edges      []svgEdge
	Colors     []string // one arrowhead marker per color, referenced by index
}

type svgNode struct {
	X, Y, W, H float64 // top-left corner and size
	TX, TY     float64 // the centre, where the name is written
	Name       string
	Title      string // the tooltip: the transaction's operations
	Dashed     bool   // the transaction did not commit (aborted, or of unknown outcome)
}

type svgEdge struct {
	D      string  // the path
	LX, LY float64 // the label's centre
	LW, LH float64 // the label box's size
	Label  string
	Title  string // the tooltip: the step's sentence
	Color  string
	Marker int // index in svgGraph.Colors
}

// rect is an axis-aligned box: its top-left corner and size.
type rect struct{ x, y, w, h float64 }

// overlaps reports whether r and q overlap, each grown by margin m on every side.
func (r rect) overlaps(q rect, m float64) bool {
	return r.x-m < q.x+q.w && q.x-m < r.x+r.w && r.y-m < q.y+q.h && q.y-m < r.y+r.h
}

// curve is an edge's path: a quadratic (3 points) or cubic (4 points) Bézier curve.
type curve []point

type point struct{ x, y float64 }

// at is the curve's point at parameter t in [0, 1].
func (c curve) at(t float64) point {
	u := 1 - t
	if len(c) == 3 {
		return point{
			u*u*c[0].x + 2*u*t*c[1].x + t*t*c[2].x,
			u*u*c[0].y + 2*u*t*c[1].y + t*t*c[2].y,
		}
	}
	a, b, d, e := u*u*u, 3*u*u*t, 3*u*t*t, t*t*t
	return point{
		a*c[0].x + b*c[1].x + d*c[2].x + e*c[3].x,
		a*c[0].y + b*c[1].y + d*c[2].y + e*c[3].y,
	}
}

// path is the curve as an SVG path.
func (c curve) path() string {
	if len(c) == 3 {
		return fmt.Sprintf("M %.1f %.1f Q %.1f %.1f %.1f %.1f", c[0].x, c[0].y, c[1].x, c[1].y, c[2].x, c[2].y)
	}
	return fmt.Sprintf("M %.1f %.1f C %.1f %.1f %.1f %.1f %.1f %.1f", c[0].x, c[0].y, c[1].x, c[1].y, c[2].x, c[2].y, c[3].x, c[3].y)
}

const (
	nodeH   = 30.0
	charW   = 8.4 // monospace advance at the graph's font size (14px)
	labelH  = 20.0
	minRing = 90.0
)

// layout draws e's cycle: the transactions its steps join (and no other) on a circle, in
// the order the explanation lists them (a cycle's order, clockwise), each step a curve
// bent outwards so that the two directions between a pair, and repeated steps, stay apart,
// a step from a transaction to itself a loop outside its box. Each label sits on a box of
// its own, placed along its curve where it overlaps no box and no other label. The view
// box is fitted to what was drawn. An anomaly without steps has no graph.
func layout(e Explanation) svgGraph {
	var g svgGraph
	txns := endpoints(e)
	if len(txns) == 0 {
		return g
	}
	pos := g.placeNodes(txns, ringRadius(txns, e.Steps))
	seen := map[[2]int]int{}
	marker := map[string]int{}
	var curves []curve
	for _, s := range e.Steps {
		i, ok1 := pos[s.FromID]
		j, ok2 := pos[s.ToID]
		if !ok1 || !ok2 {
			continue
		}
		k := seen[[2]int{i, j}]
		seen[[2]int{i, j}]++
		curves = append(curves, g.addEdge(s, i, j, k, marker))
	}
	g.placeLabels(curves)
	g.fit(curves)
	return g
}

// endpoints returns the transactions of e that some step begins or ends at, in e's order.
func endpoints(e Explanation) []Txn {
	used := map[history.TxnID]bool{}
	for _, s := range e.Steps {
		used[s.FromID], used[s.ToID] = true, true
	}
	var out []Txn
	for _, t := range e.Txns {
		if used[t.ID] {
			out = append(out, t)
		}
	}
	return out
}

// ringRadius is the radius of the circle the transactions go on: none for one, room for a
// box and a label between two, and neighbours at least a box and a label apart along the
// circle for more.
func ringRadius(txns []Txn, steps []Step) float64 {
	n := len(txns)
	widest, label := 0.0, 0.0
	for _, t := range txns {
		widest = max(widest, boxWidth(t.Name))
	}
	for _, s := range steps {
		label = max(label, labelWidth(stepLabel(s)))
	}
	switch {
	case n == 1:
		return 0
	case n == 2:
		return max(minRing, (widest+label)/2+24)
	}
	return max(minRing, (widest+min(label, 3*widest)+48)/(2*math.Sin(math.Pi/float64(n))))
}

// placeNodes places the transactions clockwise on a circle of radius ring from the top
// (two side by side) and returns each one's node index.
func (g *svgGraph) placeNodes(txns []Txn, ring float64) map[history.TxnID]int {
	n := len(txns)
	pos := make(map[history.TxnID]int, n)
	for i, t := range txns {
		a := -math.Pi/2 + 2*math.Pi*float64(i)/float64(n)
		if n == 2 {
			a = math.Pi * float64(i) // side by side
		}
		x, y := ring*math.Cos(a), ring*math.Sin(a)
		w := boxWidth(t.Name)
		g.Nodes = append(g.Nodes, svgNode{X: x - w/2, Y: y - nodeH/2, W: w, H: nodeH, TX: x, TY: y, Name: t.Name, Title: txnTitle(t), Dashed: t.Outcome != "" && t.Outcome != "committed"})
		pos[t.ID] = i
	}
	return pos
}

// txnTitle is a transaction's tooltip: its name, outcome when it did not commit, and
// operations.
func txnTitle(t Txn) string {
	s := boxName(t)
	for i, o := range t.Ops {
		if i == 0 {
			s += ":"
		}
		s += " " + o
	}
	if t.Elided > 0 {
		s += fmt.Sprintf(" … %d more", t.Elided)
	}
	return s
}

// addEdge draws step s from node i to node j, the k-th such step, and returns its curve:
// a quadratic curve bent to the right of the direction of travel (outwards for a clockwise
// cycle), more for each repeated step, or a loop for a step from a node to itself. marker
// maps each colour to its arrowhead.
func (g *svgGraph) addEdge(s Step, i, j, k int, marker map[string]int) curve {
	var c curve
	if i == j {
		c = g.loop(i, k)
	} else {
		c = g.arc(i, j, k)
	}
	color := relColor(s.Rel)
	m, ok := marker[color]
	if !ok {
		m = len(g.Colors)
		marker[color] = m
		g.Colors = append(g.Colors, color)
	}
	label := stepLabel(s)
	g.Edges = append(g.Edges, svgEdge{
		D: c.path(), Label: label, Title: s.Sentence, Color: color, Marker: m,
		LW: labelWidth(label), LH: labelH,
	})
	return c
}

// arc is the curve of the k-th step from node i to node j.
func (g *svgGraph) arc(i, j, k int) curve {
	a, b := g.Nodes[i], g.Nodes[j]
	x1, y1, x2, y2 := a.TX, a.TY, b.TX, b.TY
	dx, dy := x2-x1, y2-y1
	d := math.Hypot(dx, dy)
	bend := d * (0.2 + 0.15*float64(k))
	qx, qy := (x1+x2)/2+dy/d*bend, (y1+y2)/2-dx/d*bend
	sx, sy := clip(a, qx-x1, qy-y1)
	ex, ey := clip(b, qx-x2, qy-y2)
	return curve{{sx, sy}, {qx, qy}, {ex, ey}}
}

// loop is the curve of the k-th step from node i to itself: a loop on the side of the box
// away from the circle's centre (above, for a node at the centre), larger for each repeat.
func (g *svgGraph) loop(i, k int) curve {
	n := g.Nodes[i]
	ux, uy := n.TX, n.TY
	if d := math.Hypot(ux, uy); d > 1e-9 {
		ux, uy = ux/d, uy/d
	} else {
		ux, uy = 0, -1
	}
	size := 75 + 30*float64(k)
	rot := func(a float64) (float64, float64) {
		return ux*math.Cos(a) - uy*math.Sin(a), ux*math.Sin(a) + uy*math.Cos(a)
	}
	ax, ay := rot(-0.3)
	bx, by := rot(0.3)
	sx, sy := clip(n, ax, ay)
	ex, ey := clip(n, bx, by)
	c1x, c1y := rot(-0.75)
	c2x, c2y := rot(0.75)
	return curve{{sx, sy}, {n.TX + c1x*(size+n.W/2), n.TY + c1y*(size+n.H/2)}, {n.TX + c2x*(size+n.W/2), n.TY + c2y*(size+n.H/2)}, {ex, ey}}
}

// labelTs are where along its curve a label may go, in order of preference.
var labelTs = []float64{0.5, 0.4, 0.6, 0.3, 0.7, 0.2, 0.8}

// placeLabels puts each edge's label on its curve at the first place (labelTs) where its
// box overlaps no transaction's box and no label placed before it (a loop's just outside
// the loop); where there is none, at the clear place nearest the curve's middle.
func (g *svgGraph) placeLabels(curves []curve) {
	var taken []rect
	for _, n := range g.Nodes {
		taken = append(taken, rect{n.X, n.Y, n.W, n.H})
	}
	clear := func(r rect) bool {
		for _, q := range taken {
			if r.overlaps(q, 3) {
				return false
			}
		}
		return true
	}
	for i := range g.Edges {
		ed := &g.Edges[i]
		box := func(p point) rect { return rect{p.x - ed.LW/2, p.y - ed.LH/2, ed.LW, ed.LH} }
		var at point
		if len(curves[i]) == 4 { // a loop: the label goes just outside its far end
			at = nearestClear(beyond(curves[i], ed.LW, ed.LH), box, clear)
		} else {
			at = placeOnCurve(curves[i], box, clear)
		}
		ed.LX, ed.LY = at.x, at.y
		taken = append(taken, box(at))
	}
}

// beyond is the centre of a w by h label just outside the far end of loop c, away from
// the box it leaves and returns to.
func beyond(c curve, w, h float64) point {
	p := c.at(0.5)
	mx, my := (c[0].x+c[3].x)/2, (c[0].y+c[3].y)/2
	ux, uy := p.x-mx, p.y-my
	if d := math.Hypot(ux, uy); d > 1e-9 {
		ux, uy = ux/d, uy/d
	}
	off := math.Abs(ux)*w/2 + math.Abs(uy)*h/2 + 3
	return point{p.x + ux*off, p.y + uy*off}
}

// placeOnCurve is the first place along c (labelTs) where a label's box is clear, or
// the clear place nearest c's middle.
func placeOnCurve(c curve, box func(point) rect, clear func(rect) bool) point {
	for _, t := range labelTs {
		if p := c.at(t); clear(box(p)) {
			return p
		}
	}
	return nearestClear(c.at(0.5), box, clear)
}

// nearestClear is p if a label's box there is clear, else the first clear place on
// circles around p, a quarter of a label's height wider each time, twelve places on each;
// if none is clear within fifty circles, p.
func nearestClear(p point, box func(point) rect, clear func(rect) bool) point {
	if clear(box(p)) {
		return p
	}
	for k := 1; k <= 50; k++ {
		r := float64(k) * labelH / 4
		for i := range 12 {
			a := 2 * math.Pi * float64(i) / 12
			if q := (point{p.x + r*math.Cos(a), p.y + r*math.Sin(a)}); clear(box(q)) {
				return q
			}
		}
	}
	return p
}

// fit fits the view box to the boxes, the curves and the labels.
func (g *svgGraph) fit(curves []curve) {
	x0, y0, x1, y1 := math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)
	grow := func(ax, ay, bx, by float64) {
		x0, y0, x1, y1 = min(x0, ax), min(y0, ay), max(x1, bx), max(y1, by)
	}
	for _, nd := range g.Nodes {
		grow(nd.X, nd.Y, nd.X+nd.W, nd.Y+nd.H)
	}
	for _, c := range curves {
		for t := 0.0; t <= 1; t += 0.125 {
			p := c.at(t)
			grow(p.x, p.y, p.x, p.y)
		}
	}
	for _, ed := range g.Edges {
		grow(ed.LX-ed.LW/2, ed.LY-ed.LH/2, ed.LX+ed.LW/2, ed.LY+ed.LH/2)
	}
	const pad = 16
	g.X, g.Y = x0-pad, y0-pad
	g.W, g.H = x1-x0+2*pad, y1-y0+2*pad
}

func boxWidth(name string) float64 { return float64(len([]rune(name)))*charW + 24 }

func labelWidth(label string) float64 { return float64(len([]rune(label)))*charW + 10 }

// stepLabel is an edge's label: its relation, and its key if it has one.
func stepLabel(s Step) string {
	if s.Key != "" {
		return s.Rel.String() + " " + s.Key
	}
	return s.Rel.String()
}

// clip returns where the ray from the centre of box n in direction (dx, dy) leaves it, a
// few pixels out so arrowheads stay visible.
func clip(n svgNode, dx, dy float64) (float64, float64) {
	cx, cy := n.X+n.W/2, n.Y+n.H/2
	t := math.Inf(1)
	if dx != 0 {
		t = min(t, (n.W/2+4)/math.Abs(dx))
	}
	if dy != 0 {
		t = min(t, (n.H/2+4)/math.Abs(dy))
	}
	if math.IsInf(t, 1) {
		return cx, cy
	}
	return cx + dx*t, cy + dy*t
}
