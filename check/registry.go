package check

// checkers is the registry: which checker checks which levels, in preference order. The
// CLI and the server share it. A level that no entry lists is refused, never passed.
var checkers = []Checker{}
