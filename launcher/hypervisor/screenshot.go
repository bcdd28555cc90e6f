package hypervisor

import (
	"errors"
	"fmt"
	"io"

	"libvirt.org/go/libvirt"
)

// ErrInvalidOperation is returned when the domain's state does not allow
// an operation: a screenshot of a domain that is not running or has no
// screen (libvirt's ERR_OPERATION_INVALID).
var ErrInvalidOperation = errors.New("operation not valid for the domain now")

// invalidOperation marks ERR_OPERATION_INVALID as ErrInvalidOperation;
// other errors pass unchanged.
func invalidOperation(err error) error {
	var lerr libvirt.Error
	if errors.As(err, &lerr) && lerr.Code == libvirt.ERR_OPERATION_INVALID {
		return markedError{err, ErrInvalidOperation}
	}
	return err
}

// IsInvalidOperation reports whether err says the domain's state does not
// allow the operation (it is not running, it has no screen).
func IsInvalidOperation(err error) bool {
	return errors.Is(err, ErrInvalidOperation)
}

// Screenshot has libvirt take a picture of the domain's screen (0 is the
// first) and returns its MIME type and the picture, to be read to its end
// and closed. The format is the hypervisor's: QEMU 7.2 under libvirt 9.0
// sends image/x-portable-pixmap (PPM), the test driver image/png. The
// picture's size is the guest's choice: the caller bounds what it reads.
func (c *Conn) Screenshot(name string, screen uint) (string, io.ReadCloser, error) {
	d, err := c.lookup(name)
	if err != nil {
		return "", nil, err
	}
	st, err := c.conn.NewStream(0)
	if err != nil {
		d.Free()
		return "", nil, fmt.Errorf("screenshot of domain %s: open stream: %w", name, err)
	}
	mime, err := d.Screenshot(st, uint32(screen), 0)
	if err != nil {
		st.Free()
		d.Free()
		return "", nil, fmt.Errorf("screenshot of domain %s: %w", name, invalidOperation(notFound(err)))
	}
	return mime, &picture{st: st, d: d, name: name}, nil
}

// picture reads a screenshot's stream. It is finished once read to its
// end, aborted when closed before.
type picture struct {
	st   *libvirt.Stream
	d    *libvirt.Domain
	name string
	eof  bool
}

func (p *picture) Read(b []byte) (int, error) {
	if p.eof {
		return 0, io.EOF
	}
	if len(b) == 0 {
		return 0, nil
	}
	n, err := p.st.Recv(b)
	if err != nil {
		return n, fmt.Errorf("screenshot of domain %s: %w", p.name, err)
	}
	if n == 0 {
		p.eof = true
		return 0, io.EOF
	}
	return n, nil
}

func (p *picture) Close() error {
	var err error
	if p.eof {
		err = p.st.Finish()
	} else {
		err = p.st.Abort()
	}
	p.st.Free()
	p.d.Free()
	if err != nil {
		return fmt.Errorf("screenshot of domain %s: close stream: %w", p.name, err)
	}
	return nil
}
