package console

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"
)

// Bytes the guest's shell (busybox ash and its line editor) is sent.
const (
	enter = '\r'
	// killLine (Ctrl-U) clears the line before the cursor; the editor
	// redraws the prompt.
	killLine = 0x15
)

// LineLength is how many keys go on one line before it is cleared: with
// the prompt the line stays well inside the 80 columns a shell assumes on
// a serial port, so the editor never wraps or redraws while a key is timed.
const LineLength = 32

// promptEnd ends the guest shell's prompt (PS1 '\h:\w# ').
const promptEnd = "# "

// Waits of a session.
const (
	// promptRetry is how long one Enter waits for a prompt before the next
	// is sent: the shell may still be starting after the ready marker, and
	// QEMU accepts a client only once the previous one let go.
	promptRetry = 2 * time.Second
	// Quiet is how long the console must stay silent after a line is
	// cleared before the next key is timed.
	Quiet = 100 * time.Millisecond
	// noisyLimit bounds how long a clear waits for the console to quiet.
	noisyLimit = 10 * time.Second
)

var errTimeout = errors.New("timed out")

// session is one connection to a guest's serial console. A goroutine reads
// what the guest sends so that every wait can time out; both paths are
// read the same way, so its hand-off costs them the same.
type session struct {
	conn   io.ReadWriteCloser
	chunks chan []byte
	done   chan struct{}
	// err is why reading ended; written before chunks is closed.
	err error

	// keys are the bytes typed, in turn (alphabet); next is the next one.
	keys []byte
	next int
	// col is how many keys are on the current line.
	col int
	// keyTimeout, promptRetry and quiet are the session's waits (tests
	// shorten them).
	keyTimeout, promptRetry, quiet time.Duration
}

func newSession(conn io.ReadWriteCloser, keyTimeout time.Duration) *session {
	s := &session{
		conn: conn, chunks: make(chan []byte, 64), done: make(chan struct{}),
		keyTimeout: keyTimeout, promptRetry: promptRetry, quiet: Quiet,
	}
	go s.read()
	return s
}

func (s *session) read() {
	defer close(s.chunks)
	for {
		buf := make([]byte, 4096)
		n, err := s.conn.Read(buf)
		if n > 0 {
			select {
			case s.chunks <- buf[:n]:
			case <-s.done:
				return
			}
		}
		if err != nil {
			s.err = err
			return
		}
	}
}

// Close ends the session and its connection: QEMU's chardev serves one
// client at a time, the next session waits for this one to let go.
func (s *session) Close() error {
	close(s.done)
	return s.conn.Close()
}

// recv waits for the next chunk until t fires.
func (s *session) recv(ctx context.Context, t <-chan time.Time) ([]byte, error) {
	select {
	case c, ok := <-s.chunks:
		if !ok {
			if s.err == nil || s.err == io.EOF {
				return nil, errors.New("the console closed the connection")
			}
			return nil, fmt.Errorf("read the console: %w", s.err)
		}
		return c, nil
	case <-t:
		return nil, errTimeout
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// discard drops what arrived so far: nothing received before a key was
// sent can be its echo.
func (s *session) discard() {
	for {
		select {
		case _, ok := <-s.chunks:
			if !ok {
				return
			}
		default:
			return
		}
	}
}

// prompt clears what a previous client left on the line and presses Enter
// until the shell shows its prompt, within timeout. The keys become the
// letters the prompt does not contain.
func (s *session) prompt(ctx context.Context, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	var seen []byte
	for time.Now().Before(deadline) {
		if _, err := s.conn.Write([]byte{killLine, enter}); err != nil {
			return fmt.Errorf("write to the console: %w", err)
		}
		t := time.NewTimer(s.promptRetry)
		for {
			c, err := s.recv(ctx, t.C)
			if errors.Is(err, errTimeout) {
				break
			}
			if err != nil {
				t.Stop()
				return err
			}
			seen = append(seen, c...)
			if i := bytes.LastIndex(seen, []byte(promptEnd)); i >= 0 {
				t.Stop()
				// What follows the prompt counts as its own: busybox asks
				// the terminal for the cursor position (ESC [ 6 n).
				after, err := s.settle(ctx)
				if err != nil {
					return err
				}
				line := slices.Concat(seen[lineStart(seen, i):], after)
				if s.keys = alphabet(line); len(s.keys) == 0 {
					return fmt.Errorf("the prompt %q leaves no letter to type", line)
				}
				s.col = 0
				return nil
			}
		}
	}
	return fmt.Errorf("no shell prompt (%q) on the console within %s; it sent %q", promptEnd, timeout, tail(seen, 200))
}

// lineStart is where the line that holds seen[i] starts.
func lineStart(seen []byte, i int) int {
	return bytes.LastIndexAny(seen[:i], "\r\n") + 1
}

// alphabet is the keys to type: the lower-case letters that the prompt does
// not contain, so that a prompt the shell draws again (after a clear, a
// message) is never taken for an echo.
func alphabet(prompt []byte) []byte {
	var keys []byte
	for c := byte('a'); c <= 'z'; c++ {
		if bytes.IndexByte(prompt, c) < 0 {
			keys = append(keys, c)
		}
	}
	return keys
}

// settle waits until the console has been silent for s.quiet and returns
// what it sent until then.
func (s *session) settle(ctx context.Context) ([]byte, error) {
	var got []byte
	limit := time.Now().Add(noisyLimit)
	for time.Now().Before(limit) {
		t := time.NewTimer(s.quiet)
		c, err := s.recv(ctx, t.C)
		t.Stop()
		if errors.Is(err, errTimeout) {
			return got, nil
		}
		if err != nil {
			return got, err
		}
		got = append(got, c...)
	}
	return got, fmt.Errorf("the console did not fall silent within %s", noisyLimit)
}

// clearLine empties the shell's line and waits for its redraw to pass.
func (s *session) clearLine(ctx context.Context) error {
	if _, err := s.conn.Write([]byte{killLine}); err != nil {
		return fmt.Errorf("write to the console: %w", err)
	}
	s.col = 0
	_, err := s.settle(ctx)
	return err
}

// key types the next key and times it until its echo arrives; noisy says
// the reply held other bytes too.
func (s *session) key(ctx context.Context) (d time.Duration, noisy bool, err error) {
	if len(s.keys) == 0 {
		return 0, false, errors.New("no prompt seen yet")
	}
	if s.col >= LineLength {
		if err := s.clearLine(ctx); err != nil {
			return 0, false, err
		}
	}
	k := s.keys[s.next%len(s.keys)]
	s.next++
	s.col++
	s.discard()
	t := time.NewTimer(s.keyTimeout)
	defer t.Stop()
	start := time.Now()
	if _, err := s.conn.Write([]byte{k}); err != nil {
		return 0, false, fmt.Errorf("write to the console: %w", err)
	}
	for {
		c, err := s.recv(ctx, t.C)
		if err != nil {
			if errors.Is(err, errTimeout) {
				err = fmt.Errorf("no echo of %q within %s", k, s.keyTimeout)
			}
			return 0, false, err
		}
		d = time.Since(start)
		found, other := match(c, k)
		noisy = noisy || other
		if found {
			return d, noisy, nil
		}
	}
}

// match looks for the echo of key in a chunk of the reply: whether it is
// there, and whether anything else is.
func match(chunk []byte, key byte) (found, other bool) {
	n := bytes.Count(chunk, []byte{key})
	return n > 0, n != len(chunk)
}

// keystrokes types warmup keys untimed, clears the line, then times n
// keys; the line is cleared again at the end for the next client.
func (s *session) keystrokes(ctx context.Context, warmup, n int) (lat []time.Duration, noisy int, err error) {
	for range warmup {
		if _, _, err := s.key(ctx); err != nil {
			return nil, 0, fmt.Errorf("warm-up: %w", err)
		}
	}
	if err := s.clearLine(ctx); err != nil {
		return nil, 0, err
	}
	for i := range n {
		d, nz, err := s.key(ctx)
		if err != nil {
			return lat, noisy, fmt.Errorf("keystroke %d: %w", i+1, err)
		}
		lat = append(lat, d)
		if nz {
			noisy++
		}
	}
	return lat, noisy, s.clearLine(ctx)
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}
