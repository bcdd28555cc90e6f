package console

import (
	"context"
	"io"
	"time"
)

// Attach joins a console to a person: in goes to the guest, the guest's
// output to out, until the escape byte or the end of in (nil), the console
// closing (nil on a plain close, else the reason, e.g. a
// *stream.ClosedError when another connection took over), or ctx ending
// (ctx.Err()). It closes conn before it returns.
//
// A read of in that blocks is left behind: Attach returns without it, and
// the goroutine ends with the next byte or the end of in (a CLI process
// exits anyway).
func Attach(ctx context.Context, conn io.ReadWriteCloser, in io.Reader, out io.Writer) error {
	defer conn.Close()
	typed := make(chan error, 1)
	go func() {
		_, err := io.Copy(conn, NewEscapeReader(in))
		typed <- err
	}()
	shown := make(chan error, 1)
	go func() {
		_, err := io.Copy(out, conn)
		shown <- err
	}()
	select {
	case err := <-typed:
		if err != nil {
			// The input could not reach the guest: the console broke, and
			// its reader is about to say why, which is the better news.
			select {
			case why := <-shown:
				if why != nil {
					return why
				}
			case <-time.After(time.Second):
			}
		}
		return err
	case err := <-shown:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}
