package native

import (
	"bytes"
	"io"
	"runtime"
	"slices"

	"github.com/isovet/isovet/history"
)

// Reading a large stream on a machine with two or more cores runs in two stages: a
// goroutine reads blocks of whole lines and parses the compact ones with fastTxn (the part
// that needs no builder), while Decode's goroutine adds them to the builder in order and
// decodes every other line the general way. The builder sees the same calls in the same
// order as when reading serially, lines and offsets in errors are the same, and a parse
// error stops the stream at the same line, so the result is the same history or the same
// error; only the wall time differs (TestPipelineAgreesWithSerialReading).

const (
	// pipelineMin is the smallest known input size worth a second goroutine: below it,
	// the cost of handing blocks between cores outweighs the overlap.
	pipelineMin = 4 << 20
	// pipelineBlock is the size of a block of lines handed from stage to stage.
	pipelineBlock = 256 << 10
	// pipelineBatches is how many blocks may be in flight.
	pipelineBatches = 4
)

// batch is a block of whole lines and what the parsing stage made of them.
type batch struct {
	buf  []byte
	recs []fastRec // one per line; ops0 < 0 marks a line for the general parser
	fb   fastBuf
	err  error // the read error after these lines; nil also at the end of input
	last bool  // no batch follows
}

// usePipeline reports whether to read a stream of size bytes (-1: unknown) in two stages.
func (d *Decoder) usePipeline(size int64) bool {
	if d.noFast {
		return false
	}
	if d.block != 0 {
		return d.block > 0
	}
	return runtime.GOMAXPROCS(0) > 1 && (size < 0 || size >= pipelineMin)
}

// decodePipelined is Decode in two stages.
func (d *Decoder) decodePipelined(r io.Reader, size int64, b *history.Builder) error {
	block := pipelineBlock
	if d.block > 0 {
		block = d.block
	}
	full := make(chan *batch, pipelineBatches)
	free := make(chan *batch, pipelineBatches)
	stop := make(chan struct{})
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		parseStage(r, block, full, free, stop)
	}()
	// Stop the parsing stage and wait for it, so that it no longer reads r when Decode
	// returns.
	finish := func(err error) error {
		close(stop)
		<-exited
		return err
	}
	p := progress{size: size, start: d.mark(b)}
	for {
		bt := <-full
		if err := d.decodeBatch(b, bt, &p); err != nil {
			return finish(err)
		}
		if bt.last {
			<-exited
			if bt.err != nil {
				return d.readErr(bt.err)
			}
			return nil
		}
		free <- bt
	}
}

// decodeBatch adds the lines of bt to b in order: those the parsing stage parsed, and the
// others parsed the general way.
func (d *Decoder) decodeBatch(b *history.Builder, bt *batch, p *progress) error {
	for i := range bt.recs {
		rec := &bt.recs[i]
		d.nextLine(p, len(rec.ln))
		if rec.ops0 >= 0 {
			d.records++
			d.commitFast(b, rec, &bt.fb)
		} else if err := d.decodeGeneral(rec.ln, b); err != nil {
			return err
		}
		d.growOnce(b, p)
	}
	return nil
}

// parseStage reads r in blocks of whole lines, parses them and sends them on full, until
// the end of input, a read error, or stop.
func parseStage(r io.Reader, block int, full, free chan *batch, stop chan struct{}) {
	p := parser{r: r, block: block, free: free, stop: stop}
	for !p.eof {
		bt := p.batch()
		if bt == nil {
			return
		}
		select {
		case <-stop:
			return
		default:
		}
		p.read(bt)
		p.parse(bt)
		select {
		case full <- bt:
		case <-stop:
			return
		}
	}
}

// parser is the state of the parsing stage between blocks.
type parser struct {
	r     io.Reader
	block int
	free  chan *batch
	stop  chan struct{}
	carry []byte // the start of a line that continues in the next block
	made  int    // the batches made
	eof   bool
}

// batch returns a batch to fill: a free one, else a new one while fewer than
// pipelineBatches exist, else the next one freed; nil on stop.
func (p *parser) batch() *batch {
	select {
	case bt := <-p.free:
		return bt
	case <-p.stop:
		return nil
	default:
	}
	if p.made < pipelineBatches {
		p.made++
		// Room for the lines and ops of a block of short lines, so that they rarely grow.
		return &batch{buf: make([]byte, 0, p.block), recs: make([]fastRec, 0, p.block/128+1), fb: fastBuf{ops: make([]fastOp, 0, p.block/16+1)}}
	}
	select {
	case bt := <-p.free:
		return bt
	case <-p.stop:
		return nil
	}
}

// read fills bt with the carried start of a line and at least a block more, on to the end
// of a line or of the input.
func (p *parser) read(bt *batch) {
	bt.buf = append(bt.buf[:0], p.carry...)
	bt.recs, bt.err = bt.recs[:0], nil
	bt.fb.reset()
	scanned := 0
	for {
		if len(bt.buf) >= p.block {
			if bytes.IndexByte(bt.buf[scanned:], '\n') >= 0 {
				return
			}
			scanned = len(bt.buf)
		}
		if len(bt.buf) == cap(bt.buf) {
			bt.buf = slices.Grow(bt.buf, max(p.block, len(bt.buf)))
		}
		n, err := p.r.Read(bt.buf[len(bt.buf):cap(bt.buf)])
		bt.buf = bt.buf[:len(bt.buf)+n]
		if err != nil {
			p.eof = true
			if err != io.EOF {
				bt.err = err
			}
			return
		}
	}
}

// parse parses the whole lines of bt with fastTxn, marking the others for the general
// parser, and carries the rest to the next block (at the end of input, it is the last
// line).
func (p *parser) parse(bt *batch) {
	lines := bt.buf
	p.carry = p.carry[:0]
	if !p.eof {
		end := bytes.LastIndexByte(lines, '\n') + 1
		p.carry = append(p.carry, lines[end:]...)
		lines = lines[:end]
	}
	for len(lines) > 0 {
		n := bytes.IndexByte(lines, '\n') + 1
		if n == 0 {
			n = len(lines)
		}
		ln := lines[:n:n]
		lines = lines[n:]
		bt.recs = append(bt.recs, fastRec{})
		rec := &bt.recs[len(bt.recs)-1]
		if !fastTxn(ln, rec, &bt.fb) {
			*rec = fastRec{ln: ln, ops0: -1}
		}
	}
	bt.last = p.eof
}
