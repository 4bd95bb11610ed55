package main

import (
	"encoding/json"
	"io"

	"github.com/isovet/isovet/internal/explain"
)

// Every JSON document isovet prints opens with the same two fields: "schema", the version
// of docs/report.schema.json it follows (explain.SchemaVersion), and "kind", which names
// the document's shape: a consumer reads kind and knows the rest. The kinds: report
// (check, run), stat, analyze, sat, coo, convert, formats, replay, and the serve API's
// status, accepted, error, violation and warning. docs/json.md shows each.

// jsonHead is the two fields every document opens with.
type jsonHead struct {
	Schema int    `json:"schema"`
	Kind   string `json:"kind"`
}

// newHead returns the head of a document of kind.
func newHead(kind string) jsonHead { return jsonHead{Schema: explain.SchemaVersion, Kind: kind} }

// writeJSONDoc writes doc, indented, with HTML characters as they are.
func writeJSONDoc(w io.Writer, doc any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(doc)
}
