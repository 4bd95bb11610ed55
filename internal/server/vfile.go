package server

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
)

// violationsFile is the file violations are appended to, a JSON line each.
//
// Lines are collected while the checker handles a batch (or a tick) and written by one
// write call of whole lines before the batch is answered (and, over NATS, acknowledged):
// a violation a client was told of is in the file, and a process killed at any point
// leaves at most a torn last line, never a line broken in the middle of the file. The
// file is not synced after each write unless sync is set (Options.SyncViolations): the
// operating system keeps what was written through a crash of the process, but a crash of
// the machine may lose the last writes. At start, a torn last line is cut off (with a
// warning saying how many bytes) before anything is appended.
type violationsFile struct {
	f    *os.File
	pend []byte // whole lines not yet written
	sync bool
}

// openViolationsFile opens path for appending, creating it, after repairing a torn last
// line; each complete line's violation id is passed to seen. It returns the number of
// bytes cut off and of lines that do not parse (left as they are).
func openViolationsFile(path string, sync bool, seen func(id string)) (_ *violationsFile, cut int64, bad int, _ error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, 0, 0, fmt.Errorf("opening violations file: %w", err)
	}
	size, err := f.Seek(0, io.SeekEnd)
	if err == nil {
		var keep int64
		if keep, err = endOfLastLine(f, size); err == nil && keep < size {
			cut = size - keep
			err = f.Truncate(keep)
		}
	}
	if err == nil {
		bad, err = readIDs(f, seen)
	}
	if err == nil {
		_, err = f.Seek(0, io.SeekEnd)
	}
	if err != nil {
		f.Close()
		return nil, 0, 0, fmt.Errorf("violations file %s: %w", path, err)
	}
	return &violationsFile{f: f, sync: sync}, cut, bad, nil
}

// endOfLastLine returns the offset just past the file's last newline (0 if it has none).
func endOfLastLine(f *os.File, size int64) (int64, error) {
	buf := make([]byte, 64<<10)
	for end := size; end > 0; {
		start := max(0, end-int64(len(buf)))
		b := buf[:end-start]
		if _, err := f.ReadAt(b, start); err != nil {
			return 0, err
		}
		for i := len(b) - 1; i >= 0; i-- {
			if b[i] == '\n' {
				return start + int64(i) + 1, nil
			}
		}
		end = start
	}
	return 0, nil
}

// readIDs passes the id of every line of f, from its start, to seen, and counts the lines
// that are not violations' JSON.
func readIDs(f *os.File, seen func(id string)) (bad int, _ error) {
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return 0, err
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		if len(sc.Bytes()) == 0 {
			continue
		}
		var v struct {
			ID string `json:"id"`
		}
		if json.Unmarshal(sc.Bytes(), &v) != nil || v.ID == "" {
			bad++
			continue
		}
		seen(v.ID)
	}
	return bad, sc.Err()
}

// add queues one violation's line.
func (vf *violationsFile) add(line []byte) {
	vf.pend = append(vf.pend, line...)
	vf.pend = append(vf.pend, '\n')
}

// write writes the queued lines in one call (and syncs, if asked).
func (vf *violationsFile) write() error {
	if len(vf.pend) == 0 {
		return nil
	}
	_, err := vf.f.Write(vf.pend)
	vf.pend = vf.pend[:0]
	if err == nil && vf.sync {
		err = vf.f.Sync()
	}
	return err
}

// close writes what is queued, syncs and closes the file.
func (vf *violationsFile) close() error {
	err := vf.write()
	if e := vf.f.Sync(); err == nil {
		err = e
	}
	if e := vf.f.Close(); err == nil {
		err = e
	}
	return err
}
