package explain

import (
	"encoding/json"
	"io"

	"github.com/isovet/isovet/anomaly"
	"github.com/isovet/isovet/history"
	"github.com/isovet/isovet/internal/report"
)

// SchemaVersion is the version of the JSON document [JSON] and [JSONResults] write (its
// "schema" field, described by docs/report.schema.json). It changes only when a field is
// removed or changes meaning; new fields may appear within a version.
const SchemaVersion = 1

// ReportKind is the "kind" of the document [JSON] and [JSONResults] write. Every JSON
// document isovet prints names its kind (report, stat, analyze, ...; docs/json.md), so a
// program reading one dispatches on that field.
const ReportKind = "report"

// Result is one history's element of the JSON document: the file it was read from and its
// format, and its report or the error that kept it from being checked.
type Result struct {
	File   string // the history's path as given ("" when it has none, e.g. a library caller)
	Format string // the format it was read in ("" when unknown)
	// Report is the check's report; nil when Err is set.
	Report *report.Report
	// Level is the level asked for, used when Report is nil.
	Level anomaly.Level
	// Err is why the history could not be checked (unreadable, refused); nil with a report.
	Err error
	// Database and Workload, for a history `isovet run` recorded, say which database it
	// drove (its description, e.g. "PostgreSQL 16.2 at REPEATABLE READ") with which
	// workload; "" otherwise.
	Database, Workload string
}

// JSON writes r as the JSON document of one result with no file ([JSONResults]).
func JSON(w io.Writer, r *report.Report) error {
	return JSONResults(w, []Result{{Report: r}})
}

// JSONResults writes one JSON document holding results, the same shape for one history or
// many, indented, in a stable order that names transactions, keys and values as the source
// did (never by dense ids). Keys are always strings, as the source wrote them (an integer
// key 255 is "255"); values keep their type: numbers stay numbers, strings strings, nil is
// null. Fields marked "omitted" are left out when empty. docs/report.schema.json is its
// JSON Schema.
//
//	{
//	  "schema": 1,                              // SchemaVersion
//	  "kind": "report",                         // ReportKind
//	  "results": [{
//	  "file": "h.edn",                          // omitted when the history has no file
//	  "format": "elle-edn",                     // omitted when unknown
//	  "database": "memdb serializable",         // isovet run only: the database driven
//	  "workload": "rw-register",                // isovet run only: the workload
//	  "level": "serializable",
//	  "verdict": "fail",                        // pass, fail, unknown, or error
//	  "error": "unreadable: ...",               // only with verdict error, which has no more fields
//	  "checker": "basic",
//	  "failed_statements": {                    // omitted when the source marks none failed
//	    "reading": "uncertain",                 // uncertain, rolled-back or skipped
//	    "committed": ["T7"],                    // logged committed, containing a failed statement
//	    "ops": 1, "message": "..."
//	  },
//	  "anomalies": [{
//	    "kind": "G1a",                          // anomaly.Kind name
//	    "title": "aborted read (G1a)",
//	    "also": ["read-skew"],                  // omitted
//	    "key": "x",                             // omitted when not a one-key finding
//	    "lead": "T102 read x=1, which T101 wrote before it aborted.",  // what went wrong, plainly
//	    "message": "T102 read x=1, which only T101 wrote, and it aborted",
//	    "txns": [{
//	      "name": "T101", "session": "s1", "outcome": "aborted",
//	      "ops": ["w(x,1)"],
//	      "elided_ops": 3,                      // omitted
//	      "time": {"begin": 1, "end": 5},       // client interval, ns; omitted
//	      "timestamps": {"start": "3", "commit": "7.1"}   // omitted
//	    }],
//	    "steps": [{
//	      "from": "T101", "to": "T102", "rel": "wr",   // rel: ww, wr, rw, so, rt, ts, pwr, prw joined by "+"
//	      "key": "x", "value": 1, "value2": 2,       // omitted when not about a key / absent
//	      "why": "T102 read x=1, which T101 wrote",
//	      "sentence": "T101 < T102, because T102 read x=1, which T101 wrote"
//	    }],
//	    "cycle": false,
//	    "contradiction": "...",
//	    "ruled_out": ["..."]                    // omitted
//	  }],
//	  "notes": ["..."],
//	  "caveats": [{                             // omitted when none made the verdict unknown
//	    "kind": "partial",                      // basic-only, partial, untimed, placeholders,
//	                                            // stopped, chosen-order, uncertain-outcome,
//	                                            // unlogged-writers
//	    "note": "..."                           // the sentence, also among "notes"
//	  }],
//	  "stats": {"txns": 2, "committed": 1, ..., "elapsed_ns": 0, "phases": [{"name": "...", "elapsed_ns": 0}]},
//	  "followup": {                             // omitted; only on a pass
//	    "level": "strict-serializable",         // the level's real-time counterpart
//	    "verdict": "fail",
//	    "why": "...",                           // omitted
//	    "anomaly": {...}                        // omitted; as in "anomalies"
//	  }
//	  }]
//	}
func JSONResults(w io.Writer, results []Result) error {
	doc := jsonDocument{Schema: SchemaVersion, Kind: ReportKind, Results: make([]jsonResult, len(results))}
	for i, res := range results {
		doc.Results[i] = resultJSON(res)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(doc)
}

// resultJSON is res in the document's shape.
func resultJSON(res Result) jsonResult {
	out := jsonResult{File: res.File, Format: res.Format, Database: res.Database, Workload: res.Workload, Level: res.Level.String()}
	r := res.Report
	if r == nil {
		out.Verdict = "error"
		out.Error = "no report"
		if res.Err != nil {
			out.Error = res.Err.Error()
		}
		return out
	}
	out.Level, out.Verdict = r.Level.String(), r.Verdict.String()
	out.jsonReport = reportJSON(r)
	return out
}

// reportJSON is r's fields in the document's shape, beside its level and verdict.
func reportJSON(r *report.Report) *jsonReport {
	out := &jsonReport{
		Checker:   r.Checker,
		Anomalies: []jsonAnomaly{},
		Notes:     Notes(r),
		Stats:     statsJSON(r.Stats),
	}
	if f := r.Failed; f != nil && f.Ops > 0 {
		jf := &jsonFailed{Reading: f.Reading.String(), Committed: []string{}, Ops: f.Ops, Message: Failed(r)}
		n := namer{r.History}
		for _, t := range f.Committed {
			jf.Committed = append(jf.Committed, n.txn(t))
		}
		out.Failed = jf
	}
	if out.Notes == nil {
		out.Notes = []string{}
	}
	for _, c := range r.Applied() {
		out.Caveats = append(out.Caveats, jsonCaveat{Kind: c.Kind.String(), Note: c.Note})
	}
	for _, a := range r.Anomalies {
		out.Anomalies = append(out.Anomalies, anomalyJSON(Explain(r.History, a)))
	}
	if f := r.Followup; f != nil && r.Verdict == report.Pass {
		out.Followup = &jsonFollowup{Level: f.Level.String(), Verdict: f.Verdict.String(), Why: f.Why}
		if f.Anomaly != nil {
			a := anomalyJSON(Explain(r.History, *f.Anomaly))
			out.Followup.Anomaly = &a
		}
	}
	return out
}

type jsonDocument struct {
	Schema  int          `json:"schema"`
	Kind    string       `json:"kind"`
	Results []jsonResult `json:"results"`
}

// jsonResult is one [Result]: its file, level and verdict, then the report's other fields
// (none for an error).
type jsonResult struct {
	File     string `json:"file,omitempty"`
	Format   string `json:"format,omitempty"`
	Database string `json:"database,omitempty"`
	Workload string `json:"workload,omitempty"`
	Level    string `json:"level"`
	Verdict  string `json:"verdict"`
	Error    string `json:"error,omitempty"`
	*jsonReport
}

type jsonReport struct {
	Checker   string        `json:"checker"`
	Failed    *jsonFailed   `json:"failed_statements,omitempty"`
	Anomalies []jsonAnomaly `json:"anomalies"`
	Notes     []string      `json:"notes"`
	Caveats   []jsonCaveat  `json:"caveats,omitempty"`
	Stats     jsonStats     `json:"stats"`
	Followup  *jsonFollowup `json:"followup,omitempty"`
}

// jsonCaveat is a [report.Caveat] that made the verdict unknown.
type jsonCaveat struct {
	Kind string `json:"kind"`
	Note string `json:"note"`
}

// jsonFailed is [report.Report.Failed]: the transactions logged as committed that contain a
// failed statement, and how they were read.
type jsonFailed struct {
	Reading   string   `json:"reading"`   // uncertain, rolled-back or skipped
	Committed []string `json:"committed"` // their names, as the source gave them
	Ops       int      `json:"ops"`       // failed statements dropped, in all transactions
	Message   string   `json:"message"`
}

// jsonFollowup is [report.Followup]: whether the level's real-time counterpart holds too.
type jsonFollowup struct {
	Level   string       `json:"level"`
	Verdict string       `json:"verdict"`
	Why     string       `json:"why,omitempty"`
	Anomaly *jsonAnomaly `json:"anomaly,omitempty"`
}

type jsonAnomaly struct {
	Kind          string     `json:"kind"`
	Title         string     `json:"title"`
	Also          []string   `json:"also,omitempty"`
	Key           *jsonKey   `json:"key,omitempty"`
	Lead          string     `json:"lead"`
	Message       string     `json:"message"`
	Txns          []jsonTxn  `json:"txns"`
	Steps         []jsonStep `json:"steps"`
	Cycle         bool       `json:"cycle"`
	Contradiction string     `json:"contradiction"`
	RuledOut      []string   `json:"ruled_out,omitempty"`
}

type jsonTxn struct {
	Name       string          `json:"name"`
	Session    string          `json:"session,omitempty"`
	Outcome    string          `json:"outcome,omitempty"`
	Ops        []string        `json:"ops"`
	ElidedOps  int             `json:"elided_ops,omitempty"`
	Time       *jsonInterval   `json:"time,omitempty"`
	Timestamps *jsonTimestamps `json:"timestamps,omitempty"`
}

type jsonInterval struct {
	Begin int64 `json:"begin"`
	End   int64 `json:"end"`
}

type jsonTimestamps struct {
	Start  string `json:"start"`
	Commit string `json:"commit"`
}

type jsonStep struct {
	From     string     `json:"from"`
	To       string     `json:"to"`
	Rel      string     `json:"rel"`
	Key      *jsonKey   `json:"key,omitempty"`
	Value    *jsonDatum `json:"value,omitempty"`
	Value2   *jsonDatum `json:"value2,omitempty"`
	Why      string     `json:"why"`
	Sentence string     `json:"sentence"`
}

type jsonStats struct {
	Txns              int         `json:"txns"`
	Committed         int         `json:"committed"`
	Aborted           int         `json:"aborted"`
	Unknown           int         `json:"unknown"`
	Sessions          int         `json:"sessions"`
	Keys              int         `json:"keys"`
	Ops               int         `json:"ops"`
	KnownEdges        int         `json:"known_edges"`
	Constraints       int         `json:"constraints"`
	PrunedConstraints int         `json:"pruned_constraints"`
	Components        int         `json:"components"`
	SATVars           int         `json:"sat_vars"`
	SATClauses        int         `json:"sat_clauses"`
	Conflicts         int64       `json:"conflicts"`
	Decisions         int64       `json:"decisions"`
	Propagations      int64       `json:"propagations"`
	ElapsedNS         int64       `json:"elapsed_ns"`
	Phases            []jsonPhase `json:"phases"`
}

type jsonPhase struct {
	Name      string `json:"name"`
	ElapsedNS int64  `json:"elapsed_ns"`
}

// jsonDatum is an original key or value: a JSON number, string or null.
type jsonDatum struct{ d history.Datum }

func (j jsonDatum) MarshalJSON() ([]byte, error) {
	if i, ok := j.d.Int(); ok {
		return json.Marshal(i)
	}
	if s, ok := j.d.Str(); ok {
		return json.Marshal(s)
	}
	return []byte("null"), nil
}

// jsonKey is an original key, always a JSON string: its text as the source wrote it (the
// integer key 255 is "255"), so a key has one type whatever the input format.
type jsonKey string

// key is the key d, or nil when !ok.
func key(d history.Datum, ok bool) *jsonKey {
	if !ok {
		return nil
	}
	k := jsonKey(d.String())
	return &k
}

func datum(d history.Datum, ok bool) *jsonDatum {
	if !ok {
		return nil
	}
	return &jsonDatum{d}
}

func anomalyJSON(e Explanation) jsonAnomaly {
	info := e.Kind.Info()
	a := jsonAnomaly{
		Kind:          info.Name,
		Title:         info.Title,
		Key:           key(e.keyDatum, e.hasKey),
		Lead:          e.Lead,
		Message:       e.Message,
		Txns:          []jsonTxn{},
		Steps:         []jsonStep{},
		Cycle:         e.Cycle,
		Contradiction: e.Contradiction,
		RuledOut:      e.RuledOut,
	}
	for _, k := range e.Also {
		a.Also = append(a.Also, k.Info().Name)
	}
	for _, t := range e.Txns {
		jt := jsonTxn{Name: t.Name, Session: t.Session, Outcome: t.Outcome, Ops: t.Ops, ElidedOps: t.Elided}
		if jt.Ops == nil {
			jt.Ops = []string{}
		}
		if tx := t.tx; tx != nil {
			if tx.HasTime {
				jt.Time = &jsonInterval{tx.Time.Begin, tx.Time.End}
			}
			if tx.HasTimestamps {
				jt.Timestamps = &jsonTimestamps{tx.Start.String(), tx.Commit.String()}
			}
		}
		a.Txns = append(a.Txns, jt)
	}
	for _, s := range e.Steps {
		a.Steps = append(a.Steps, jsonStep{
			From: s.From, To: s.To, Rel: s.Rel.String(),
			Key:   key(s.keyDatum, s.hasKey),
			Value: datum(s.valDatum, s.hasVal), Value2: datum(s.val2Datum, s.hasVal2),
			Why: s.Why, Sentence: s.Sentence,
		})
	}
	return a
}

func statsJSON(s report.Stats) jsonStats {
	j := jsonStats{
		Txns: s.Txns, Committed: s.Committed, Aborted: s.Aborted, Unknown: s.Unknown,
		Sessions: s.Sessions, Keys: s.Keys, Ops: s.Ops,
		KnownEdges: s.KnownEdges, Constraints: s.Constraints, PrunedConstraints: s.PrunedConstraints,
		Components: s.Components, SATVars: s.SATVars, SATClauses: s.SATClauses,
		Conflicts: s.Conflicts, Decisions: s.Decisions, Propagations: s.Propagations,
		ElapsedNS: s.Elapsed.Nanoseconds(), Phases: []jsonPhase{},
	}
	for _, p := range s.Phases {
		j.Phases = append(j.Phases, jsonPhase{p.Name, p.Elapsed.Nanoseconds()})
	}
	return j
}
