package tcpowner

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"strings"
	"testing"
)

// Lines as Linux prints them (x86-64, little-endian words).
const (
	header4 = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode                                                     \n"
	header6 = "  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
	listen4 = "   0: 0100007F:9F7D 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1001        0 3113425 1 000000007dc940b4 100 0 0 10 0                   \n"
	synRecv = "   1: 0100007F:9F7D 0100007F:E6E8 03 00000000:00000000 02:000000C8 00000000  1001        0 0 2 0000000000000000\n"
	estab4  = "   2: 0100007F:E6E8 0100007F:9F7D 01 00000000:00000000 00:00000000 00000000     0        0 3122579 1 000000002b46fc95 20 0 0 10 -1\n"
	tw4     = "   3: 0100007F:9F7D 0100007F:E6E9 06 00000000:00000000 03:00001770 00000000     0        0 0 3 0000000000000000\n"
	any6    = "   0: 00000000000000000000000000000000:92A1 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 3122577 1 00000000c7bfa552 100 0 0 10 0\n"
	mapped6 = "   1: 0000000000000000FFFF00000100007F:92A1 0000000000000000FFFF00000100007F:E6E8 01 00000000:00000000 00:00000000 00000000  1001        0 3122579 1 000000002b46fc95 20 0 0 10 -1\n"
	loop6   = "   2: 00000000000000000000000001000000:1F90 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000    42        0 77 1 00000000c7bfa552 100 0 0 10 0\n"
)

func ap(s string) netip.AddrPort { return netip.MustParseAddrPort(s) }

func TestParse(t *testing.T) {
	if binary.NativeEndian.Uint16([]byte{1, 0}) != 1 {
		t.Skip("the samples are a little-endian machine's")
	}
	tests := []struct {
		name  string
		table string
		want  []Socket
		err   string
	}{
		{"header only", header4, nil, ""},
		{"empty", "", nil, ""},
		{"listener", header4 + listen4, []Socket{{Local: ap("127.0.0.1:40829"), Remote: ap("0.0.0.0:0"), State: Listen, UID: 1001, Inode: 3113425}}, ""},
		{"connection not accepted yet carries its listener's uid", header4 + synRecv,
			[]Socket{{Local: ap("127.0.0.1:40829"), Remote: ap("127.0.0.1:59112"), State: SynRecv, UID: 1001}}, ""},
		{"both ends and a time-wait", header4 + synRecv + estab4 + tw4, []Socket{
			{Local: ap("127.0.0.1:40829"), Remote: ap("127.0.0.1:59112"), State: SynRecv, UID: 1001},
			{Local: ap("127.0.0.1:59112"), Remote: ap("127.0.0.1:40829"), State: Established, UID: 0, Inode: 3122579},
			{Local: ap("127.0.0.1:40829"), Remote: ap("127.0.0.1:59113"), State: TimeWait, UID: 0},
		}, ""},
		{"ipv6 wildcard listener", header6 + any6, []Socket{{Local: ap("[::]:37537"), Remote: ap("[::]:0"), State: Listen, Inode: 3122577}}, ""},
		{"ipv4-mapped connection is unmapped", header6 + mapped6, []Socket{{Local: ap("127.0.0.1:37537"), Remote: ap("127.0.0.1:59112"), State: Established, UID: 1001, Inode: 3122579}}, ""},
		{"ipv6 loopback", header6 + loop6, []Socket{{Local: ap("[::1]:8080"), Remote: ap("[::]:0"), State: Listen, UID: 42, Inode: 77}}, ""},
		{"no trailing newline", header4 + strings.TrimSuffix(listen4, "\n"), []Socket{{Local: ap("127.0.0.1:40829"), Remote: ap("0.0.0.0:0"), State: Listen, UID: 1001, Inode: 3113425}}, ""},
		{"too few fields", header4 + "   0: 0100007F:9F7D 00000000:0000 0A\n", nil, "fields"},
		{"odd address length", header4 + strings.Replace(listen4, "0100007F:", "100007F:", 1), nil, "local address"},
		{"bad hex", header4 + strings.Replace(listen4, "0100007F:", "0100007G:", 1), nil, "local address"},
		{"bad port", header4 + strings.Replace(listen4, ":9F7D", ":9F7", 1), nil, "local address"},
		{"bad state", header4 + strings.Replace(listen4, " 0A ", " XA ", 1), nil, "state"},
		{"bad uid", header4 + strings.Replace(listen4, "  1001 ", " -1001 ", 1), nil, "uid"},
		{"bad inode", header4 + strings.Replace(listen4, " 3113425 ", " 31x3425 ", 1), nil, "inode"},
		{"a bad line is not skipped", header4 + listen4 + "garbage\n" + estab4, nil, "line 3"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse([]byte(tc.table))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want one mentioning %q (got %+v)", err, tc.err, got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

// format prints s as the kernel would in the file of its family.
func format(s Socket, v6 bool) string {
	addr := func(a netip.AddrPort) string {
		var b []byte
		if v6 {
			x := a.Addr().As16()
			b = x[:]
		} else {
			x := a.Addr().As4()
			b = x[:]
		}
		var sb strings.Builder
		for i := 0; i < len(b); i += 4 {
			fmt.Fprintf(&sb, "%08X", binary.NativeEndian.Uint32(b[i:]))
		}
		return fmt.Sprintf("%s:%04X", sb.String(), a.Port())
	}
	return fmt.Sprintf("%4d: %s %s %02X 00000000:00000000 00:00000000 00000000 %5d        0 %d 1 0000000000000000 100 0 0 10 0\n",
		0, addr(s.Local), addr(s.Remote), uint8(s.State), s.UID, s.Inode)
}

// FuzzParse: any input is parsed or refused without a panic, and every
// socket parsed reads back the same when printed as the kernel prints it.
func FuzzParse(f *testing.F) {
	for _, s := range []string{header4 + listen4 + synRecv + estab4 + tw4, header6 + any6 + mapped6 + loop6, listen4, "", "\n\n", "0: :", "0: 0100007F:9F7D 0100007F:9F7D 0A a b c 1 0 1"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, table []byte) {
		got, err := Parse(table)
		if err != nil {
			return
		}
		for _, s := range got {
			if !s.Local.IsValid() || !s.Remote.IsValid() {
				t.Fatalf("invalid address in %+v from %q", s, table)
			}
			v6 := !s.Local.Addr().Is4() || !s.Remote.Addr().Is4()
			line := format(s, v6)
			back, err := Parse([]byte(line))
			if err != nil || len(back) != 1 || back[0] != s {
				t.Fatalf("%+v printed as %q read back as %+v, %v", s, line, back, err)
			}
		}
	})
}
