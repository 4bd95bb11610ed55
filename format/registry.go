package format

// formats is the registry: one entry per format, in sniffing order (most specific first).
// Each format's owner adds its entry here.
var formats = []Format{}

// Formats returns the registered formats in sniffing order. The slice is shared: do not
// modify it.
func Formats() []Format { return formats }

// Lookup returns the format with the given name or alias.
func Lookup(name string) (Format, bool) {
	for _, f := range formats {
		if f.Name == name {
			return f, true
		}
		for _, a := range f.Aliases {
			if a == name {
				return f, true
			}
		}
	}
	return Format{}, false
}

// Names returns the canonical names of every registered format.
func Names() []string {
	names := make([]string, len(formats))
	for i, f := range formats {
		names[i] = f.Name
	}
	return names
}
