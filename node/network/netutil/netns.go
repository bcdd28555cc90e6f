package netutil

import (
	"errors"
	"fmt"
	"runtime"

	"github.com/vishvananda/netns"
)

// Do runs fn on an OS thread switched into the network namespace ns, for
// what is bound to the calling thread's namespace rather than to a netlink
// handle: opening /dev/net/tun (a tap is created in its opener's
// namespace) or a socket. fn must not start goroutines that expect to be in
// ns: they run on other threads.
//
// fn runs on a goroutine of its own, so the caller's thread never changes
// namespace. If that thread cannot be switched back, it stays locked and
// the runtime ends it with its goroutine: no other goroutine ever runs in
// the wrong namespace.
func Do(ns netns.NsHandle, fn func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		origin, err := netns.Get()
		if err != nil {
			runtime.UnlockOSThread()
			errc <- fmt.Errorf("get the thread's netns: %w", err)
			return
		}
		defer origin.Close()
		if err := netns.Set(ns); err != nil {
			// setns failed: the thread is still where it was.
			runtime.UnlockOSThread()
			errc <- fmt.Errorf("enter netns %s: %w", ns, err)
			return
		}
		err = fn()
		if rerr := netns.Set(origin); rerr != nil {
			errc <- errors.Join(err, fmt.Errorf("return to netns %s: %w", origin, rerr))
			return
		}
		runtime.UnlockOSThread()
		errc <- err
	}()
	return <-errc
}

// NewNS creates an anonymous network namespace, on a goroutine of its own
// whose thread returns to its namespace afterwards (or, if it cannot, dies
// locked with the goroutine), so no caller's thread ever changes namespace.
// The namespace lives while a handle, a process or a mount holds it.
func NewNS() (netns.NsHandle, error) {
	type result struct {
		ns  netns.NsHandle
		err error
	}
	c := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		origin, err := netns.Get()
		if err != nil {
			runtime.UnlockOSThread()
			c <- result{err: fmt.Errorf("get the thread's netns: %w", err)}
			return
		}
		defer origin.Close()
		// netns.New moves the calling thread into the new namespace.
		ns, err := netns.New()
		if err != nil {
			runtime.UnlockOSThread()
			c <- result{err: fmt.Errorf("create a network namespace: %w", err)}
			return
		}
		if err := netns.Set(origin); err != nil {
			c <- result{ns: ns, err: fmt.Errorf("return to netns %s: %w", origin, err)}
			return
		}
		runtime.UnlockOSThread()
		c <- result{ns: ns}
	}()
	r := <-c
	if r.err != nil && r.ns.IsOpen() {
		r.ns.Close()
	}
	return r.ns, r.err
}
