package tcpowner

import (
	"encoding/binary"
	"testing"

	"golang.org/x/sys/unix"
)

// diagMessage is one netlink message of type typ carrying data, as the
// kernel frames it (length, type, flags, sequence, port id; padded to 4).
func diagMessage(typ uint16, seq uint32, data []byte) []byte {
	ne := binary.NativeEndian
	m := make([]byte, unix.SizeofNlMsghdr, unix.SizeofNlMsghdr+len(data)+3)
	ne.PutUint32(m, uint32(unix.SizeofNlMsghdr+len(data)))
	ne.PutUint16(m[4:], typ)
	ne.PutUint32(m[8:], seq)
	m = append(m, data...)
	for len(m)%4 != 0 {
		m = append(m, 0)
	}
	return m
}

// FuzzReadAnswer: whatever a netlink datagram holds, reading it never
// panics, and it yields no more sockets than it has room for.
func FuzzReadAnswer(f *testing.F) {
	msg := make([]byte, sizeofDiagMsg)
	msg[0], msg[1] = unix.AF_INET, byte(Established)
	binary.BigEndian.PutUint16(msg[4:], 8888)
	copy(msg[8:], []byte{127, 0, 0, 1})
	binary.BigEndian.PutUint16(msg[6:], 40000)
	copy(msg[24:], []byte{127, 0, 0, 1})
	binary.NativeEndian.PutUint32(msg[64:], 1000)
	binary.NativeEndian.PutUint32(msg[68:], 12345)
	done := make([]byte, 4)
	f.Add(append(diagMessage(unix.SOCK_DIAG_BY_FAMILY, 7, msg), diagMessage(unix.NLMSG_DONE, 7, done)...))
	errno := make([]byte, 4)
	enoent := -int32(unix.ENOENT)
	binary.NativeEndian.PutUint32(errno, uint32(enoent))
	f.Add(diagMessage(unix.NLMSG_ERROR, 7, errno))
	msg6 := append([]byte(nil), msg...)
	msg6[0] = unix.AF_INET6
	f.Add(diagMessage(unix.SOCK_DIAG_BY_FAMILY, 7, msg6))
	f.Add(diagMessage(unix.SOCK_DIAG_BY_FAMILY, 7, msg[:40]))
	f.Add([]byte{255, 255, 255, 255})
	f.Fuzz(func(t *testing.T, b []byte) {
		n := 0
		_, err := readAnswer(b, 7, func(s Socket) {
			n++
			if !s.Local.Addr().IsValid() || !s.Remote.Addr().IsValid() {
				t.Fatalf("a socket without addresses: %+v", s)
			}
		})
		if max := len(b) / (unix.SizeofNlMsghdr + sizeofDiagMsg); n > max {
			t.Fatalf("%d sockets from %d bytes (err %v)", n, len(b), err)
		}
	})
}

// The seed above reads back as the socket it describes.
func TestReadAnswerSeed(t *testing.T) {
	msg := make([]byte, sizeofDiagMsg)
	msg[0], msg[1] = unix.AF_INET, byte(Listen)
	binary.BigEndian.PutUint16(msg[4:], 8888)
	copy(msg[8:], []byte{127, 0, 0, 1})
	binary.NativeEndian.PutUint32(msg[64:], 1000)
	binary.NativeEndian.PutUint32(msg[68:], 12345)
	var got []Socket
	done, err := readAnswer(append(diagMessage(unix.SOCK_DIAG_BY_FAMILY, 3, msg), diagMessage(unix.NLMSG_DONE, 3, make([]byte, 4))...), 3,
		func(s Socket) { got = append(got, s) })
	if err != nil || !done || len(got) != 1 {
		t.Fatalf("done %v, err %v, sockets %+v", done, err, got)
	}
	if s := got[0]; s.Local.String() != "127.0.0.1:8888" || s.State != Listen || s.UID != 1000 || s.Inode != 12345 {
		t.Errorf("socket %+v", s)
	}
	if _, err := readAnswer(diagMessage(unix.SOCK_DIAG_BY_FAMILY, 4, msg), 3, func(Socket) {}); err == nil {
		t.Error("an answer to another request was taken")
	}
}
