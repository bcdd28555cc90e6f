package migrationproxy

import (
	"errors"
	"io"
	"net"
	"slices"
	"sync"
	"time"
)

// halfCloser is a connection that can end its sending side alone: a unix
// connection, a TCP connection or a TLS connection.
type halfCloser interface {
	net.Conn
	CloseWrite() error
}

// copyBufferSize is each direction's buffer where the proxy copies (TLS on
// one side: between nodes; copyStream): a guest's memory crosses it in
// reads of up to a unix socket's send buffer (about 200 KiB), where
// io.Copy's 32 KiB would take six read and write calls for each.
const copyBufferSize = 256 << 10

// splice copies a to b and b to a until both ended, ending each sending
// side when its source ended (half-close), and closes both. An error on
// either direction (not the peer's end of stream) closes both at once, so
// neither copy waits on a peer that will not answer.
func splice(a, b halfCloser) (aToB, bToA int64) {
	var wg sync.WaitGroup
	var once sync.Once
	closeBoth := func() { once.Do(func() { a.Close(); b.Close() }) }
	copyOne := func(dst, src halfCloser, n *int64) {
		defer wg.Done()
		var err error
		*n, err = copyStream(dst, src)
		if err != nil {
			closeBoth()
			return
		}
		if err := dst.CloseWrite(); err != nil && !errors.Is(err, net.ErrClosed) {
			closeBoth()
		}
	}
	wg.Add(2)
	go copyOne(b, a, &aToB)
	go copyOne(a, b, &bToA)
	wg.Wait()
	closeBoth()
	return aToB, bToA
}

// group tracks a side's listeners, open connections and goroutines, so
// Close ends them all and returns once they ended, and drain lets the open
// connections end by themselves.
type group struct {
	mu        sync.Mutex
	closed    bool
	listeners []io.Closer
	conns     map[io.Closer]struct{}
	wg        sync.WaitGroup
	// connWG counts the goroutines of accepted connections (goConn).
	connWG sync.WaitGroup
}

// listen adds listener ln: closed by closeAll, and first by drain; false
// (and ln closed) when the group was closed already.
func (g *group) listen(ln io.Closer) bool {
	if !g.track(ln) {
		return false
	}
	g.mu.Lock()
	g.listeners = append(g.listeners, ln)
	g.mu.Unlock()
	return true
}

// track adds c to be closed by closeAll; false (and c closed) when the
// group was closed already.
func (g *group) track(c io.Closer) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		c.Close()
		return false
	}
	if g.conns == nil {
		g.conns = map[io.Closer]struct{}{}
	}
	g.conns[c] = struct{}{}
	return true
}

func (g *group) untrack(c io.Closer) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.conns, c)
}

// go runs fn as a tracked goroutine.
func (g *group) go_(fn func()) {
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		fn()
	}()
}

// goConn runs fn, the forwarding of one accepted connection, as a tracked
// goroutine drain waits for.
func (g *group) goConn(fn func()) {
	g.connWG.Add(1)
	g.go_(func() {
		defer g.connWG.Done()
		fn()
	})
}

// shut closes everything tracked, and everything tracked later, without
// waiting: the goroutines end as their connections fail.
func (g *group) shut() {
	g.mu.Lock()
	g.closed = true
	conns := g.conns
	g.conns = nil
	g.mu.Unlock()
	for c := range conns {
		c.Close()
	}
}

// closeAll shuts the group and waits for its goroutines.
func (g *group) closeAll() {
	g.shut()
	g.wg.Wait()
}

// drain closes the listeners, waits up to grace for the open connections
// to end by themselves, then closes what is left (closeAll).
func (g *group) drain(grace time.Duration) {
	g.mu.Lock()
	listeners := slices.Clone(g.listeners)
	g.mu.Unlock()
	for _, ln := range listeners {
		ln.Close()
	}
	ended := make(chan struct{})
	go func() {
		g.connWG.Wait()
		close(ended)
	}()
	timer := time.NewTimer(grace)
	defer timer.Stop()
	select {
	case <-ended:
	case <-timer.C:
	}
}
