package vnc

import (
	"context"
	"errors"
	"io"
	"net"
	"sync"
)

// Proxy joins VNC viewers on a local listener to a VMI's display, each
// viewer connection over a stream of its own.
type Proxy struct {
	// Dial opens a stream to the display (Dial of this package, bound to a
	// VMI).
	Dial func(ctx context.Context) (io.ReadWriteCloser, error)
	// Event, if set, hears of each viewer that comes and goes and of each
	// stream that could not be opened (err != nil).
	Event func(viewer net.Addr, what string, err error)
}

// Serve accepts viewers on l until ctx ends or l fails, and returns once
// every viewer's connection is closed. It closes l.
func (p *Proxy) Serve(ctx context.Context, l net.Listener) error {
	stop := context.AfterFunc(ctx, func() { l.Close() })
	defer stop()
	defer l.Close()
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		viewer, err := l.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		wg.Go(func() { p.serve(ctx, viewer) })
	}
}

// serve pipes one viewer's connection to a new stream until either side
// ends or ctx does.
func (p *Proxy) serve(ctx context.Context, viewer net.Conn) {
	defer viewer.Close()
	display, err := p.Dial(ctx)
	if err != nil {
		p.event(viewer.RemoteAddr(), "could not reach the display", err)
		return
	}
	defer display.Close()
	p.event(viewer.RemoteAddr(), "connected", nil)
	stop := context.AfterFunc(ctx, func() {
		viewer.Close()
		display.Close()
	})
	defer stop()

	done := make(chan error, 2)
	go func() {
		_, err := io.Copy(display, viewer)
		done <- err
	}()
	go func() {
		_, err := io.Copy(viewer, display)
		done <- err
	}()
	err = <-done
	// Either side's end ends the other: close both, then collect.
	viewer.Close()
	display.Close()
	<-done
	if errors.Is(err, net.ErrClosed) || ctx.Err() != nil {
		err = nil
	}
	p.event(viewer.RemoteAddr(), "disconnected", err)
}

func (p *Proxy) event(viewer net.Addr, what string, err error) {
	if p.Event != nil {
		p.Event(viewer, what, err)
	}
}
