package native

// NewGeneralDecoder returns a decoder with the compact-line fast path turned off, so tests
// can check that both paths read every input the same way.
func NewGeneralDecoder() *Decoder { return &Decoder{noFast: true} }

// NewPipelinedDecoder returns a decoder that reads every stream in two stages, handing
// blocks of about block bytes from one to the other.
func NewPipelinedDecoder(block int) *Decoder { return &Decoder{block: block} }

// NewSerialDecoder returns a decoder that reads every stream on one goroutine.
func NewSerialDecoder() *Decoder { return &Decoder{block: -1} }

// FastTakes reports whether the fast path parses line (a transaction line, without its
// newline) rather than leaving it to the general parser.
func FastTakes(line []byte) bool {
	var r fastRec
	var f fastBuf
	return fastTxn(line, &r, &f)
}
