package certify

// SetClosureLimits sets the strict fast path's bound on its compact closure
// (maxClosureWords, closureWordsPerTxn) and returns a function that restores them.
func SetClosureLimits(words, perTxn int) (restore func()) {
	w, x := maxClosureWords, closureWordsPerTxn
	maxClosureWords, closureWordsPerTxn = words, perTxn
	return func() { maxClosureWords, closureWordsPerTxn = w, x }
}
