package notify

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// The address rule of webhook and Slack deliveries (decisions.md "Missing
// reports, timers and notifications"): a channel's URL is user input, so
// the notifier does not connect to the server's own network on its behalf.
// The rule is applied in the dialer, to the address each connection is
// about to be made to, after name resolution: a name that resolves to a
// public address when the channel is made and to an internal one later
// (DNS rebinding) is refused all the same, and so would be any redirect
// hop, were redirects ever followed. The SMTP relay is an operator setting
// and is not checked.

// FlagAllowPrivate is the serve flag that lets deliveries reach internal
// addresses; the refusals it would lift name it.
const FlagAllowPrivate = "--allow-private-webhooks"

// RefusedError is a connection the notifier would not make. Its text is
// the delivery's failure, e.g. "refused: 10.0.0.5 is a private address
// (see --allow-private-webhooks)".
type RefusedError struct {
	// Addr is what was refused: the IP address (with the IPv4 address an
	// IPv6 one embeds, in parentheses, when that decided), or the IP and
	// port of the server's admin listener.
	Addr string
	// Why says what it is: "a private address", "a cloud metadata
	// address", "this server's admin listener", ...
	Why string
	// Private is true when AllowPrivate would let it through: the text
	// then names FlagAllowPrivate.
	Private bool
}

// Error returns "refused: <addr> is <why>", with " (see
// --allow-private-webhooks)" when the flag would lift the refusal.
func (e *RefusedError) Error() string {
	return "refused: " + e.detail()
}

func (e *RefusedError) detail() string {
	s := e.Addr + " is " + e.Why
	if e.Private {
		s += " (see " + FlagAllowPrivate + ")"
	}
	return s
}

// What an address is, in a refusal's words.
const (
	classUnspecified = "an unspecified address"
	classThisNetwork = "a this-network address"
	classLoopback    = "a loopback address"
	classPrivate     = "a private address"
	classShared      = "a shared (carrier-grade NAT) address"
	classLinkLocal   = "a link-local address"
	classMulticast   = "a multicast address"
	classBroadcast   = "a broadcast address"
	classReserved    = "a reserved address"
	classMetadata    = "a cloud metadata address"
	whyAdmin         = "this server's admin listener"
	whyLocalhost     = "a loopback name"
)

// metadataAddrs are the cloud providers' instance metadata services,
// refused even with AllowPrivate: their answers hold credentials, and no
// receiver of notifications lives there.
var metadataAddrs = map[netip.Addr]bool{
	netip.MustParseAddr("169.254.169.254"): true, // AWS, GCP, Azure, OpenStack, DigitalOcean, Oracle, ...
	netip.MustParseAddr("169.254.170.2"):   true, // AWS ECS task credentials
	netip.MustParseAddr("100.100.100.200"): true, // Alibaba Cloud
	netip.MustParseAddr("fd00:ec2::254"):   true, // AWS, over IPv6
}

type addrRange struct {
	prefix netip.Prefix
	class  string
}

// v4Ranges are the IPv4 ranges that are not public unicast, the narrower
// before the wider that holds them.
var v4Ranges = []addrRange{
	{netip.MustParsePrefix("0.0.0.0/32"), classUnspecified},
	{netip.MustParsePrefix("0.0.0.0/8"), classThisNetwork},
	{netip.MustParsePrefix("10.0.0.0/8"), classPrivate},
	{netip.MustParsePrefix("100.64.0.0/10"), classShared},
	{netip.MustParsePrefix("127.0.0.0/8"), classLoopback},
	{netip.MustParsePrefix("169.254.0.0/16"), classLinkLocal},
	{netip.MustParsePrefix("172.16.0.0/12"), classPrivate},
	{netip.MustParsePrefix("192.0.0.0/24"), classReserved},   // IETF protocol assignments (DS-Lite, NAT64 discovery)
	{netip.MustParsePrefix("192.0.2.0/24"), classReserved},   // documentation
	{netip.MustParsePrefix("192.88.99.0/24"), classReserved}, // 6to4 relays, withdrawn
	{netip.MustParsePrefix("192.168.0.0/16"), classPrivate},
	{netip.MustParsePrefix("198.18.0.0/15"), classReserved},   // benchmarking
	{netip.MustParsePrefix("198.51.100.0/24"), classReserved}, // documentation
	{netip.MustParsePrefix("203.0.113.0/24"), classReserved},  // documentation
	{netip.MustParsePrefix("224.0.0.0/4"), classMulticast},
	{netip.MustParsePrefix("255.255.255.255/32"), classBroadcast},
	{netip.MustParsePrefix("240.0.0.0/4"), classReserved},
}

// IPv6 forms that embed an IPv4 address, judged by that address.
var (
	nat64Prefix = netip.MustParsePrefix("64:ff9b::/96") // RFC 6052: the IPv4 address in the last 32 bits
	sixToFour   = netip.MustParsePrefix("2002::/16")    // RFC 3056: the IPv4 address in bits 16 to 47
	globalV6    = netip.MustParsePrefix("2000::/3")     // global unicast: everything outside it is refused
)

// v6Ranges are the IPv6 ranges that are not public unicast (the embedding
// forms apart), the narrower before the wider.
var v6Ranges = []addrRange{
	{netip.MustParsePrefix("::/128"), classUnspecified},
	{netip.MustParsePrefix("::1/128"), classLoopback},
	{netip.MustParsePrefix("64:ff9b:1::/48"), classPrivate}, // local-use NAT64 (RFC 8215)
	{netip.MustParsePrefix("2001:db8::/32"), classReserved}, // documentation
	{netip.MustParsePrefix("2001::/23"), classReserved},     // IETF protocol assignments, Teredo among them
	{netip.MustParsePrefix("3fff::/20"), classReserved},     // documentation (RFC 9637)
	{netip.MustParsePrefix("fc00::/7"), classPrivate},       // unique local
	{netip.MustParsePrefix("fe80::/10"), classLinkLocal},
	{netip.MustParsePrefix("fec0::/10"), classPrivate}, // site-local, deprecated
	{netip.MustParsePrefix("ff00::/8"), classMulticast},
	{netip.MustParsePrefix("::ffff:0:0:0/96"), classReserved}, // IPv4-translated (RFC 2765)
}

// verdict is what an address is to the rule.
type verdict struct {
	class  string     // "" for a public unicast address
	always bool       // refused even with AllowPrivate (cloud metadata)
	via    netip.Addr // the embedded IPv4 address that decided, if any
}

// classify returns what ip is: public (class ""), or the class that
// refuses it. IPv4-mapped, NAT64 (64:ff9b::/96) and 6to4 addresses are
// judged by the IPv4 address they embed.
func classify(ip netip.Addr) verdict {
	ip = ip.WithZone("")
	if ip.Is4In6() {
		v := classify4(ip.Unmap())
		if v.class != "" {
			v.via = ip.Unmap()
		}
		return v
	}
	if ip.Is4() {
		return classify4(ip)
	}
	if !ip.Is6() {
		return verdict{class: classReserved}
	}
	if metadataAddrs[ip] {
		return verdict{class: classMetadata, always: true}
	}
	b := ip.As16()
	var embedded netip.Addr
	switch {
	case nat64Prefix.Contains(ip):
		embedded = netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]})
	case sixToFour.Contains(ip):
		embedded = netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]})
	}
	if embedded.IsValid() {
		v := classify4(embedded)
		if v.class != "" {
			v.via = embedded
		}
		return v
	}
	for _, r := range v6Ranges {
		if r.prefix.Contains(ip) {
			return verdict{class: r.class}
		}
	}
	if !globalV6.Contains(ip) {
		return verdict{class: classReserved}
	}
	return verdict{}
}

func classify4(ip netip.Addr) verdict {
	if metadataAddrs[ip] {
		return verdict{class: classMetadata, always: true}
	}
	for _, r := range v4Ranges {
		if r.prefix.Contains(ip) {
			return verdict{class: r.class}
		}
	}
	return verdict{}
}

// guard applies the address rule to connections.
type guard struct {
	allowPrivate bool
	admin        netip.AddrPort // the server's admin listener; zero: none
	// localAddrs lists the machine's addresses, for an admin listener
	// bound to all of them.
	localAddrs func() []netip.Addr
}

func newGuard(allowPrivate bool, admin netip.AddrPort) *guard {
	return &guard{allowPrivate: allowPrivate, admin: unmapAddrPort(admin), localAddrs: interfaceAddrs}
}

// check returns the refusal of a connection to ip:port, or nil.
func (g *guard) check(ip netip.Addr, port uint16) *RefusedError {
	if g.isAdmin(ip, port) {
		return &RefusedError{Addr: netip.AddrPortFrom(ip.WithZone(""), port).String(), Why: whyAdmin}
	}
	v := classify(ip)
	if v.class == "" || g.allowPrivate && !v.always {
		return nil
	}
	addr := ip.WithZone("").String()
	if v.via.IsValid() && v.via != ip {
		addr += " (" + v.via.String() + ")"
	}
	return &RefusedError{Addr: addr, Why: v.class, Private: !v.always}
}

// isAdmin reports whether ip:port reaches the admin listener: its very
// address, or, when it is bound to all addresses, its port on any of
// this machine's addresses.
func (g *guard) isAdmin(ip netip.Addr, port uint16) bool {
	if !g.admin.IsValid() || port != g.admin.Port() {
		return false
	}
	ip = ip.WithZone("").Unmap()
	a := g.admin.Addr()
	if !a.IsUnspecified() {
		return ip == a
	}
	if ip.IsLoopback() || ip.IsUnspecified() {
		return true
	}
	for _, l := range g.localAddrs() {
		if l == ip {
			return true
		}
	}
	return false
}

// interfaceAddrs returns the addresses of this machine's interfaces
// (none when they cannot be read).
func interfaceAddrs() []netip.Addr {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return nil
	}
	var out []netip.Addr
	for _, a := range addrs {
		if p, err := netip.ParsePrefix(a.String()); err == nil {
			out = append(out, p.Addr().Unmap())
		}
	}
	return out
}

func unmapAddrPort(ap netip.AddrPort) netip.AddrPort {
	if !ap.IsValid() {
		return ap
	}
	return netip.AddrPortFrom(ap.Addr().WithZone("").Unmap(), ap.Port())
}

// control is the dialer's check, run on every connection after its
// address is resolved and before it is made. An address it cannot read is
// refused.
func (g *guard) control(network, address string) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("refused: cannot read the address %q to connect to: %w", address, err)
	}
	if r := g.check(ap.Addr(), ap.Port()); r != nil {
		return r
	}
	return nil
}

// checkTarget applies the rule to a request's host before it is handed to
// a proxy, which connects on its own: an IP address is checked as it is, a
// name by its addresses as this machine resolves it (every one must pass).
// A name this machine cannot resolve goes to the proxy, which may: what
// the proxy itself connects to is the proxy's policy.
func (g *guard) checkTarget(ctx context.Context, u *url.URL) error {
	host := u.Hostname()
	port := portOf(u)
	if ip, ok := literalIP(host); ok {
		if r := g.check(ip, port); r != nil {
			return r
		}
		return nil
	}
	if isLocalhostName(host) {
		if g.allowPrivate {
			return nil
		}
		return &RefusedError{Addr: host, Why: whyLocalhost, Private: true}
	}
	ips, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil
	}
	for _, ip := range ips {
		if r := g.check(ip, port); r != nil {
			return r
		}
	}
	return nil
}

// portOf returns u's port, or its scheme's (80, 443).
func portOf(u *url.URL) uint16 {
	if p, err := strconv.ParseUint(u.Port(), 10, 16); err == nil {
		return uint16(p)
	}
	switch u.Scheme {
	case "https":
		return 443
	case "socks5", "socks5h":
		return 1080
	}
	return 80
}

// CheckChannelURL is the rule at a channel's creation, for URLs whose
// host says where it points without a lookup: an IP address (in any form
// a resolver reads as one: 127.1, 0x7f000001, [::ffff:10.0.0.5], ...) or
// a localhost name. It returns nil for a host name (it is checked at each
// connection) and for an allowed address, else an error whose text is
// the answer's message: "url must not point at an internal address:
// 10.0.0.5 is a private address (see --allow-private-webhooks)".
// allowPrivate and admin mean what Options.AllowPrivate and
// Options.AdminListener do. A URL that does not parse is not its
// business: nil.
func CheckChannelURL(rawURL string, allowPrivate bool, admin netip.AddrPort) error {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil
	}
	host := u.Hostname()
	var r *RefusedError
	if ip, ok := literalIP(host); ok {
		r = newGuard(allowPrivate, admin).check(ip, portOf(u))
	} else if isLocalhostName(host) && !allowPrivate {
		r = &RefusedError{Addr: host, Why: whyLocalhost, Private: true}
	}
	if r == nil {
		return nil
	}
	return errors.New("url must not point at an internal address: " + r.detail())
}

// isLocalhostName reports whether host is a name that resolves to the
// loopback interface by definition (RFC 6761): localhost, a name under
// .localhost, localhost.localdomain; with a final dot or not.
func isLocalhostName(host string) bool {
	h := strings.ToLower(strings.TrimSuffix(host, "."))
	return h == "localhost" || strings.HasSuffix(h, ".localhost") || h == "localhost.localdomain"
}

// literalIP reads host as an IP address: IPv6 (with a zone or not), IPv4
// in dotted decimal, or the older forms inet_aton reads and C resolvers
// still take (127.1, 0x7f.1, 017700000001, 2130706433); a final dot is
// ignored.
func literalIP(host string) (netip.Addr, bool) {
	if ip, err := netip.ParseAddr(host); err == nil {
		return ip, true
	}
	return parseLegacyIPv4(strings.TrimSuffix(host, "."))
}

// parseLegacyIPv4 reads s as inet_aton does: one to four parts separated
// by dots, each decimal, octal (leading 0) or hexadecimal (0x); the last
// part fills the bytes the others leave.
func parseLegacyIPv4(s string) (netip.Addr, bool) {
	parts := strings.Split(s, ".")
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	var vals [4]uint64
	for i, p := range parts {
		v, ok := parseLegacyPart(p)
		if !ok {
			return netip.Addr{}, false
		}
		vals[i] = v
	}
	n := len(parts)
	for i := range n - 1 {
		if vals[i] > 0xff {
			return netip.Addr{}, false
		}
	}
	lastBytes := 5 - n
	if vals[n-1] >= 1<<(8*lastBytes) {
		return netip.Addr{}, false
	}
	var a uint32
	for i := range n - 1 {
		a |= uint32(vals[i]) << (8 * (3 - i))
	}
	a |= uint32(vals[n-1])
	return netip.AddrFrom4([4]byte{byte(a >> 24), byte(a >> 16), byte(a >> 8), byte(a)}), true
}

func parseLegacyPart(p string) (uint64, bool) {
	if p == "" {
		return 0, false
	}
	base := 10
	switch {
	case len(p) > 2 && (p[:2] == "0x" || p[:2] == "0X"):
		base, p = 16, p[2:]
	case len(p) > 1 && p[0] == '0':
		base, p = 8, p[1:]
	}
	for i := 0; i < len(p); i++ {
		c := p[i]
		ok := c >= '0' && c <= '9' && int(c-'0') < base ||
			base == 16 && (c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F')
		if !ok {
			return 0, false
		}
	}
	v, err := strconv.ParseUint(p, base, 32)
	return v, err == nil
}

// guardedTransport returns a clone of http.DefaultTransport whose
// connections obey g: every direct connection is checked in the dialer;
// with a proxy (proxy, normally http.ProxyFromEnvironment, names one for
// the request), the request's host is checked before it is handed over,
// and the connection to the proxy itself, an operator setting, is not.
// afterCheck, when not nil (tests), runs after the check on every checked
// connection, before it is made.
func guardedTransport(g *guard, proxy func(*http.Request) (*url.URL, error), afterCheck func(address string) error) *http.Transport {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	var proxies sync.Map // host:port of the proxies named so far
	tr.Proxy = func(req *http.Request) (*url.URL, error) {
		u, err := proxy(req)
		if err != nil || u == nil {
			return u, err
		}
		if err := g.checkTarget(req.Context(), req.URL); err != nil {
			return nil, err
		}
		proxies.Store(net.JoinHostPort(u.Hostname(), strconv.Itoa(int(portOf(u)))), true)
		return u, nil
	}
	// The timeouts of http.DefaultTransport's dialer.
	direct := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
	checked := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second,
		ControlContext: func(_ context.Context, network, address string, _ syscall.RawConn) error {
			if err := g.control(network, address); err != nil {
				return err
			}
			if afterCheck != nil {
				return afterCheck(address)
			}
			return nil
		}}
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		if _, ok := proxies.Load(addr); ok {
			return direct.DialContext(ctx, network, addr)
		}
		return checked.DialContext(ctx, network, addr)
	}
	return tr
}
