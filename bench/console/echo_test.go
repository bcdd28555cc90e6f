package console

import (
	"bytes"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

const testPrompt = "vmi-tiny:/# "

// fakeShell answers like the guest's busybox ash on ttyS0: it echoes a
// letter, redraws the prompt on Ctrl-U and prints a new prompt on Enter,
// then asks the terminal where the cursor is.
type fakeShell struct {
	// deaf is how many control bytes (Ctrl-U, Enter) get no answer: the
	// shell is still starting.
	deaf int
	// silent echoes no letters.
	silent bool
	// noiseEvery writes a kernel message (without letters) before every
	// nth echo, and a line end after it.
	noiseEvery int
	// double sends every echo a second time, a moment later.
	double bool
	// closeAfter closes the connection after that many letters.
	closeAfter int

	mu       sync.Mutex
	line     []byte
	longest  int
	letters  []byte
	executed []string
}

func (f *fakeShell) serve(conn net.Conn) {
	defer conn.Close()
	b := make([]byte, 1)
	for {
		if _, err := conn.Read(b); err != nil {
			return
		}
		f.mu.Lock()
		c := b[0]
		var out [][]byte
		switch {
		case (c == killLine || c == enter) && f.deaf > 0:
			f.deaf--
		case c == killLine:
			f.line = nil
			out = append(out, []byte("\r"+testPrompt+"\x1b[J"))
		case c == enter:
			if len(f.line) > 0 {
				f.executed = append(f.executed, string(f.line))
			}
			f.line = nil
			out = append(out, []byte("\r\n"+testPrompt), []byte("\x1b[6n"))
		default:
			f.line = append(f.line, c)
			f.longest = max(f.longest, len(f.line))
			f.letters = append(f.letters, c)
			if f.silent {
				break
			}
			if f.noiseEvery > 0 && len(f.letters)%f.noiseEvery == 0 {
				out = append(out, []byte("\r\n[    1.000000] \r\n"), []byte{c, '\r', '\n'})
			} else {
				out = append(out, []byte{c})
			}
		}
		n := len(f.letters)
		double, closeAfter := f.double, f.closeAfter
		f.mu.Unlock()
		for _, o := range out {
			if _, err := conn.Write(o); err != nil {
				return
			}
		}
		if double && c != killLine && c != enter {
			time.Sleep(time.Millisecond)
			if _, err := conn.Write([]byte{c}); err != nil {
				return
			}
		}
		if closeAfter > 0 && n >= closeAfter {
			return
		}
	}
}

// newTestSession connects a session to f with short waits.
func newTestSession(t *testing.T, f *fakeShell) *session {
	t.Helper()
	client, server := net.Pipe()
	go f.serve(server)
	s := newSession(client, 500*time.Millisecond)
	s.promptRetry, s.quiet = 50*time.Millisecond, 20*time.Millisecond
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func TestSessionKeystrokes(t *testing.T) {
	for _, tc := range []struct {
		name      string
		shell     *fakeShell
		wantNoisy int
	}{
		{name: "clean echoes", shell: &fakeShell{}},
		{name: "shell starts late", shell: &fakeShell{deaf: 5}},
		{name: "kernel messages around some echoes", shell: &fakeShell{noiseEvery: 10}, wantNoisy: 7},
		{name: "every echo arrives twice", shell: &fakeShell{double: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newTestSession(t, tc.shell)
			if err := s.prompt(t.Context(), 2*time.Second); err != nil {
				t.Fatal(err)
			}
			const warmup, n = 5, 70
			lat, noisy, err := s.keystrokes(t.Context(), warmup, n)
			if err != nil {
				t.Fatal(err)
			}
			if len(lat) != n {
				t.Fatalf("got %d latencies, want %d", len(lat), n)
			}
			for i, d := range lat {
				if d <= 0 || d > time.Second {
					t.Errorf("latency %d = %s", i, d)
				}
			}
			// Noise in the warm-up is not counted: letters 10..75 are
			// timed, those divisible by 10 are noisy.
			if tc.wantNoisy > 0 && noisy != tc.wantNoisy {
				t.Errorf("noisy = %d, want %d", noisy, tc.wantNoisy)
			}
			f := tc.shell
			f.mu.Lock()
			defer f.mu.Unlock()
			if len(f.executed) > 0 {
				t.Errorf("the shell ran %q: typed lines must be cleared, never entered", f.executed)
			}
			if f.longest > LineLength {
				t.Errorf("a line grew to %d keys, want at most %d", f.longest, LineLength)
			}
			if len(f.line) != 0 {
				t.Errorf("the session left %q on the line", f.line)
			}
			if i := bytes.IndexAny(f.letters, testPrompt+"\x1b[6n"); i >= 0 {
				t.Errorf("typed %q, a byte of the prompt or the cursor query after it", f.letters[i])
			}
			if len(f.letters) != warmup+n {
				t.Errorf("typed %d letters, want %d", len(f.letters), warmup+n)
			}
		})
	}
}

func TestSessionErrors(t *testing.T) {
	for _, tc := range []struct {
		name  string
		shell *fakeShell
		want  string
	}{
		{name: "no echo", shell: &fakeShell{silent: true}, want: "no echo of"},
		{name: "closed in the middle", shell: &fakeShell{closeAfter: 30}, want: "closed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newTestSession(t, tc.shell)
			if err := s.prompt(t.Context(), 2*time.Second); err != nil {
				t.Fatal(err)
			}
			_, _, err := s.keystrokes(t.Context(), 5, 50)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one saying %q", err, tc.want)
			}
		})
	}
}

func TestPromptTimeout(t *testing.T) {
	s := newTestSession(t, &fakeShell{deaf: 1000})
	err := s.prompt(t.Context(), 200*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "no shell prompt") {
		t.Fatalf("err = %v, want no shell prompt", err)
	}
}

func TestKeyWithoutPrompt(t *testing.T) {
	s := newTestSession(t, &fakeShell{})
	if _, _, err := s.key(t.Context()); err == nil {
		t.Fatal("a key before the prompt was typed")
	}
}

func TestAlphabet(t *testing.T) {
	for _, tc := range []struct{ prompt, want string }{
		{testPrompt, "abcdefghjklopqrsuwxz"},
		{"# ", "abcdefghijklmnopqrstuvwxyz"},
		{"abcdefghijklmnopqrstuvwxyz# ", ""},
	} {
		if got := string(alphabet([]byte(tc.prompt))); got != tc.want {
			t.Errorf("alphabet(%q) = %q, want %q", tc.prompt, got, tc.want)
		}
	}
}

func TestLineStart(t *testing.T) {
	for _, tc := range []struct {
		seen, want string
	}{
		{"^U\r\n" + testPrompt, testPrompt},
		{"\r" + testPrompt, testPrompt},
		{testPrompt, testPrompt},
		{"sh: x: not found\r\n" + testPrompt, testPrompt},
	} {
		i := strings.LastIndex(tc.seen, promptEnd)
		if got := tc.seen[lineStart([]byte(tc.seen), i):]; got != tc.want {
			t.Errorf("line of %q = %q, want %q", tc.seen, got, tc.want)
		}
	}
}

func TestMatch(t *testing.T) {
	for _, tc := range []struct {
		chunk        string
		found, other bool
	}{
		{"a", true, false},
		{"aa", true, false},
		{"\x1b[Ja", true, true},
		{"a\r\n", true, true},
		{"b", false, true},
		{"", false, false},
	} {
		found, other := match([]byte(tc.chunk), 'a')
		if found != tc.found || other != tc.other {
			t.Errorf("match(%q, 'a') = %v, %v; want %v, %v", tc.chunk, found, other, tc.found, tc.other)
		}
	}
}
