package native

// NewGeneralDecoder returns a decoder with the compact-line fast path turned off, so tests
// can check that both paths read every input the same way.
func NewGeneralDecoder() *Decoder { return &Decoder{noFast: true} }
