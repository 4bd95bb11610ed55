package anomaly

import "slices"

// Words returns the sentences an explanation of an anomaly of kind k may open with, most
// specific first: what went wrong, in the words of the level's definition, as templates
// whose {placeholders} name facts of the anomaly's evidence. A renderer fills the first
// template all of whose placeholders it knows, and falls back to the kind's Meaning when it
// knows too little for any (or the kind has none: a finding whose evidence is its message,
// not a proof). The placeholders, all listed by [Placeholders], are:
//
//	{txns}                  the anomaly's transactions, "T1, T2 and T3"
//	{writers}               the same, when every step of its cycle is a write dependency
//	{a} {b}                 its first and second transaction
//	{reader} {writer}       the first anti-dependency: {reader} read a version {writer} overwrote
//	{key} {read} {missed}   ... its key; what {reader} read ("x=1", "l=[1 2]"); and the write
//	                        {reader} did not see ("T2's write of x", "T2's append of 3 to l")
//	{reader2} {writer2}     the second anti-dependency, when there are two
//	{key2}                  ... its key
//	{both}                  what both anti-dependencies read, when they read the same version
//	{observer} {source}     a read dependency: {observer} read {source}'s write (the one from
//	                        {writer} to {reader} when there is one)
//	{seen} {skey}           ... what {observer} read ("x=[1 2 *3*]"), and its key
//	{lost}                  {writer}, when {reader} also overwrote {writer}'s write
//	{ended} {began}         when {writer} ended and {reader} began, when real time orders them
//	{pred}                  the predicate of a predicate read that missed {missed}
//
// The table is data shared by every renderer: text, HTML and JSON show the same sentence.
func (k Kind) Words() []string {
	if k < numKinds {
		return slices.Clone(words[k])
	}
	return nil
}

// Placeholders returns every placeholder a [Kind.Words] template may use, without braces.
func Placeholders() []string { return slices.Clone(placeholders) }

var placeholders = []string{
	"txns", "writers", "a", "b",
	"reader", "writer", "key", "read", "missed",
	"reader2", "writer2", "key2", "both",
	"observer", "source", "seen", "skey",
	"lost", "ended", "began", "pred",
}

// words is the words table: per kind, its templates, most specific first. Kinds whose
// findings carry their evidence in the checker's message (thin-air reads, duplicates, the
// timestamp checks) have none: the meaning opens them and the message follows.
var words = [numKinds][]string{
	AbortedRead:      {"{observer} read {seen}, which {source} wrote before it aborted."},
	IntermediateRead: {"{observer} read {seen}, an intermediate state of {source}, which wrote {skey} again before it committed."},
	FutureRead:       {"{observer} read {seen}, which {source} wrote only later in the same session."},
	G0:               {"{writers} overwrote one another's writes in a cycle, so no order of the transactions explains the order of their versions.", "{txns} follow one another in a cycle, so none of them can have come first."},
	G1c:              {"{txns} each saw, overwrote or followed another, in a cycle, so none of them can have come first."},
	GSingle:          {"{reader} did not observe {missed}, though the rest of the cycle puts {writer} before {reader}."},
	G2Item:           {"{txns} depend on one another in a cycle with two or more anti-dependencies (reads of versions another of them overwrote), so no serial order explains what they read."},
	G2:               {"{txns} depend on one another in a cycle, so none of them can come first in a serial order."},
	LostUpdate: {
		"{reader} and {writer} both read {both} and both overwrote it, so one of the updates is lost.",
		"{reader} read {read} and overwrote it after {lost} did, without seeing {lost}'s write, so {lost}'s update is lost.",
		"{a} and {b} both overwrote {key} after reading the same version of it, so one of the updates is lost.",
	},
	WriteSkew: {"{reader} read {key} and {reader2} read {key2}, then each overwrote what the other had read, so neither saw the other's write and no serial order explains both."},
	ReadSkew:  {"{reader} observed some of {writer}'s writes but not others: it read {seen}, yet did not observe {missed}."},
	LongFork:  {"{reader} and {reader2} observed two independent writes in opposite orders: {reader} saw {writer2}'s write but not {writer}'s, and {reader2} saw {writer}'s but not {writer2}'s."},
	FracturedRead: {
		"{reader} observed some of {writer}'s writes but not others: it read {seen}, yet did not observe {missed}.",
	},
	CausalityViolation: {"{reader} did not observe {missed}, though the rest of the cycle puts that write in {reader}'s past: it saw an effect without its cause."},
	StaleRead: {
		"{reader} began after {writer} committed ({writer} ended at {ended}, {reader} began at {began}), yet did not observe {missed}.",
		"{reader} did not observe {missed}, though real time and the other dependencies put {writer} before {reader}.",
	},
	Phantom: {"{reader}'s predicate read {pred} did not observe {missed}, though the rest of the cycle puts {writer} before {reader}."},
}
