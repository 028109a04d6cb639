package gateway

import (
	"context"
	"net"
	"net/http"
	"time"
)

// defaultHTTPClient dials with quick ACKs (see quickAckConn) and no overall
// timeout: requests carry their own contexts. verify, when set, checks each
// connection before the transport writes to it.
func defaultHTTPClient(verify func(net.Conn) error) *http.Client {
	d := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	// REST calls are rare (create, interrupt, delete, health) and cells run
	// over the websocket, so pooled connections would only hold goroutines
	// and descriptors between them; a loopback dial costs microseconds.
	tr.DisableKeepAlives = true
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		if verify != nil {
			if err := verify(c); err != nil {
				_ = c.Close()
				return nil, err
			}
		}
		return withQuickAck(c), nil
	}
	return &http.Client{Transport: tr}
}
