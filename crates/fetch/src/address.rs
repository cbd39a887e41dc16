//! Which IP addresses an outbound fetch may connect to.
//!
//! A user-given URL must not reach what only the server can reach: its own loopback services,
//! the cloud metadata endpoint (169.254.169.254), the private network behind it. So every
//! address a fetch would connect to is classified here, after DNS resolution and for every
//! redirect, and anything that is not a public unicast address is refused unless the operator
//! allowed it ([`AddressRules`]). IPv6 forms that embed an IPv4 address (IPv4-mapped, NAT64,
//! 6to4) are judged by the IPv4 address they carry, so `::ffff:127.0.0.1` is loopback.
//!
//! IPv6 is an allow-list (only global unicast `2000::/3` minus a few special blocks) rather
//! than a deny-list: new special-purpose blocks keep appearing there, and none of them holds
//! a file server anyone imports from.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::str::FromStr;

use ipnet::{IpNet, Ipv4Net, Ipv6Net};

/// Why an address is not a public destination. The `Display` form completes "a ... address".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AddressClass {
    /// `0.0.0.0/8`, `::`: connecting to them reaches the local host.
    Unspecified,
    /// `127.0.0.0/8`, `::1`.
    Loopback,
    /// `10/8`, `172.16/12`, `192.168/16`, `fc00::/7` (unique local), `fec0::/10`.
    Private,
    /// `169.254/16` (the cloud metadata endpoint), `fe80::/10`.
    LinkLocal,
    /// `100.64/10`, carrier-grade NAT.
    SharedNat,
    /// Documentation and benchmarking ranges (`192.0.2/24`, `198.18/15`, `2001:db8::/32`, ...).
    Documentation,
    /// Multicast (`224/4`, `ff00::/8`).
    Multicast,
    /// `255.255.255.255`.
    Broadcast,
    /// Reserved or special-purpose space (`240/4`, `192.0.0/24`, IPv6 outside `2000::/3`, ...).
    Reserved,
}

impl AddressClass {
    /// Whether no setting makes this class a destination: these are not hosts at all, and
    /// `0.0.0.0` connects to the local host on Linux.
    fn never_allowed(self) -> bool {
        matches!(self, Self::Unspecified | Self::Multicast | Self::Broadcast)
    }
}

impl fmt::Display for AddressClass {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(match self {
            Self::Unspecified => "unspecified",
            Self::Loopback => "loopback",
            Self::Private => "private",
            Self::LinkLocal => "link-local",
            Self::SharedNat => "shared (carrier-grade NAT)",
            Self::Documentation => "documentation or benchmarking",
            Self::Multicast => "multicast",
            Self::Broadcast => "broadcast",
            Self::Reserved => "reserved",
        })
    }
}

/// The class of a non-public address, or `None` for a public unicast address.
pub(crate) fn classify(address: IpAddr) -> Option<AddressClass> {
    match address {
        IpAddr::V4(v4) => classify_v4(v4),
        IpAddr::V6(v6) => classify_v6(v6),
    }
}

/// The IPv4 block `a.b.c.d/prefix_len`. Used in constants only, where a prefix length past 32
/// fails the build.
const fn v4_block(octets: [u8; 4], prefix_len: u8) -> Ipv4Net {
    let [a, b, c, d] = octets;
    Ipv4Net::new_assert(Ipv4Addr::new(a, b, c, d), prefix_len)
}

/// The IPv6 block whose first two groups are `first` and `second`, the rest zero. Used in
/// constants only, where a prefix length past 128 fails the build.
const fn v6_block(first: u16, second: u16, prefix_len: u8) -> Ipv6Net {
    Ipv6Net::new_assert(Ipv6Addr::new(first, second, 0, 0, 0, 0, 0, 0), prefix_len)
}

/// IPv4 special-purpose blocks (RFC 6890 and the IANA registry) that are not global.
const V4_BLOCKS: [(Ipv4Net, AddressClass); 15] = [
    (v4_block([0, 0, 0, 0], 8), AddressClass::Unspecified),
    (v4_block([10, 0, 0, 0], 8), AddressClass::Private),
    (v4_block([100, 64, 0, 0], 10), AddressClass::SharedNat),
    (v4_block([127, 0, 0, 0], 8), AddressClass::Loopback),
    (v4_block([169, 254, 0, 0], 16), AddressClass::LinkLocal),
    (v4_block([172, 16, 0, 0], 12), AddressClass::Private),
    (v4_block([192, 0, 0, 0], 24), AddressClass::Reserved),
    (v4_block([192, 0, 2, 0], 24), AddressClass::Documentation),
    (v4_block([192, 88, 99, 0], 24), AddressClass::Reserved),
    (v4_block([192, 168, 0, 0], 16), AddressClass::Private),
    (v4_block([198, 18, 0, 0], 15), AddressClass::Documentation),
    (v4_block([198, 51, 100, 0], 24), AddressClass::Documentation),
    (v4_block([203, 0, 113, 0], 24), AddressClass::Documentation),
    (v4_block([224, 0, 0, 0], 4), AddressClass::Multicast),
    (v4_block([240, 0, 0, 0], 4), AddressClass::Reserved),
];

/// IPv6 blocks outside global unicast that have a class of their own; the rest of the space
/// outside `2000::/3` is reserved.
const V6_BLOCKS: [(Ipv6Net, AddressClass); 4] = [
    (v6_block(0xff00, 0, 8), AddressClass::Multicast),
    (v6_block(0xfe80, 0, 10), AddressClass::LinkLocal),
    (v6_block(0xfc00, 0, 7), AddressClass::Private),
    (v6_block(0xfec0, 0, 10), AddressClass::Private),
];

/// Global unicast, `2000::/3`: the only IPv6 space a fetch may reach.
const V6_GLOBAL_UNICAST: Ipv6Net = v6_block(0x2000, 0, 3);

/// Inside global unicast: documentation (2001:db8::/32, 3fff::/20), the IETF protocol block
/// 2001::/23 (Teredo, benchmarking 2001:2::/48, ORCHID) and nothing else.
const V6_GLOBAL_BLOCKS: [(Ipv6Net, AddressClass); 3] = [
    (v6_block(0x2001, 0x0db8, 32), AddressClass::Documentation),
    (v6_block(0x3fff, 0, 20), AddressClass::Documentation),
    (v6_block(0x2001, 0, 23), AddressClass::Reserved),
];

/// NAT64, `64:ff9b::/96`: the last 32 bits are an IPv4 address.
const V6_NAT64: Ipv6Net = v6_block(0x0064, 0xff9b, 96);

/// 6to4, `2002::/16`: the 32 bits after the prefix are an IPv4 address.
const V6_6TO4: Ipv6Net = v6_block(0x2002, 0, 16);

fn classify_v4(address: Ipv4Addr) -> Option<AddressClass> {
    if address.is_broadcast() {
        return Some(AddressClass::Broadcast);
    }
    V4_BLOCKS
        .iter()
        .find(|(block, _)| block.contains(&address))
        .map(|(_, class)| *class)
}

fn classify_v6(address: Ipv6Addr) -> Option<AddressClass> {
    if let Some(v4) = embedded_v4(address) {
        return classify_v4(v4);
    }
    if address.is_unspecified() {
        return Some(AddressClass::Unspecified);
    }
    if address.is_loopback() {
        return Some(AddressClass::Loopback);
    }
    let class_in = |blocks: &[(Ipv6Net, AddressClass)]| {
        blocks
            .iter()
            .find(|(block, _)| block.contains(&address))
            .map(|(_, class)| *class)
    };
    if let Some(class) = class_in(&V6_BLOCKS) {
        return Some(class);
    }
    if !V6_GLOBAL_UNICAST.contains(&address) {
        return Some(AddressClass::Reserved);
    }
    class_in(&V6_GLOBAL_BLOCKS)
}

/// The IPv4 address an IPv6 address stands for: IPv4-mapped (`::ffff:a.b.c.d`), NAT64
/// (`64:ff9b::a.b.c.d`) and 6to4 (`2002:aabb:ccdd::/48`). Traffic to them ends at that IPv4
/// address, so it is what must be judged. IPv4-compatible `::a.b.c.d` (deprecated) is not
/// unwrapped: it falls outside `2000::/3` and is refused as reserved.
fn embedded_v4(address: Ipv6Addr) -> Option<Ipv4Addr> {
    if let Some(v4) = address.to_ipv4_mapped() {
        return Some(v4);
    }
    if V6_NAT64.contains(&address) {
        let [.., a, b, c, d] = address.octets();
        return Some(Ipv4Addr::new(a, b, c, d));
    }
    if V6_6TO4.contains(&address) {
        let [_, _, a, b, c, d, ..] = address.octets();
        return Some(Ipv4Addr::new(a, b, c, d));
    }
    None
}

/// A block of IP addresses in CIDR notation: `10.1.0.0/16`, `fd00::/8`, or one address
/// (`192.0.2.7`, meaning `/32` or `/128`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IpNetwork(IpNet);

/// Why a CIDR string was not accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IpNetworkError {
    /// The part before `/` is not an IP address.
    #[error("{0:?} is not an IP address or network (like 10.1.0.0/16 or fd00::/8)")]
    Address(String),
    /// The prefix length is not a number within the address width.
    #[error("the prefix length of {0:?} is not a number from 0 to 32 (IPv4) or 128 (IPv6)")]
    PrefixLen(String),
    /// Bits are set past the prefix (`10.1.2.3/16`): probably a typo, so not silently masked.
    #[error("{0:?} has bits set past the prefix length; write the network address")]
    HostBits(String),
}

impl IpNetwork {
    /// The network `address/prefix_len`; `None` for a prefix length past the address width or
    /// host bits set past the prefix.
    pub fn new_checked(address: IpAddr, prefix_len: u8) -> Option<Self> {
        IpNet::new(address, prefix_len)
            .ok()
            .and_then(Self::without_host_bits)
    }

    /// `network` when no bit is set past its prefix.
    fn without_host_bits(network: IpNet) -> Option<Self> {
        (network.trunc() == network).then_some(Self(network))
    }

    /// Whether `address` lies in this network. An IPv4-mapped IPv6 address is compared as the
    /// IPv4 address it carries.
    pub fn contains(&self, address: IpAddr) -> bool {
        let address = match address {
            IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(address, IpAddr::V4),
            IpAddr::V4(_) => address,
        };
        self.0.contains(&address)
    }
}

impl FromStr for IpNetwork {
    type Err = IpNetworkError;

    fn from_str(raw: &str) -> Result<Self, Self::Err> {
        let (address_text, prefix_text) = match raw.split_once('/') {
            Some((address, prefix)) => (address, Some(prefix)),
            None => (raw, None),
        };
        let address: IpAddr = address_text
            .parse()
            .map_err(|_| IpNetworkError::Address(raw.to_owned()))?;
        let network = match prefix_text {
            None => IpNet::from(address),
            Some(text) => text
                .bytes()
                .all(|byte| byte.is_ascii_digit())
                .then(|| text.parse::<u8>().ok())
                .flatten()
                .and_then(|prefix_len| IpNet::new(address, prefix_len).ok())
                .ok_or_else(|| IpNetworkError::PrefixLen(raw.to_owned()))?,
        };
        Self::without_host_bits(network).ok_or_else(|| IpNetworkError::HostBits(raw.to_owned()))
    }
}

impl fmt::Display for IpNetwork {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(formatter)
    }
}

/// The part of the fetch policy that judges addresses.
#[derive(Debug, Clone, Default)]
pub(crate) struct AddressRules {
    /// Every class but unspecified, multicast and broadcast is allowed.
    pub(crate) allow_private: bool,
    /// Networks allowed whatever their class (but never unspecified, multicast, broadcast).
    pub(crate) allowed_networks: Vec<IpNetwork>,
}

impl AddressRules {
    /// `Ok` when a fetch may connect to `address`, else the class that refuses it.
    pub(crate) fn check(&self, address: IpAddr) -> Result<(), AddressClass> {
        let Some(class) = classify(address) else {
            return Ok(());
        };
        if class.never_allowed() {
            return Err(class);
        }
        if self.allow_private
            || self
                .allowed_networks
                .iter()
                .any(|network| network.contains(address))
        {
            return Ok(());
        }
        Err(class)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn class(text: &str) -> Option<AddressClass> {
        classify(text.parse().unwrap())
    }

    #[test]
    fn public_addresses_are_allowed() {
        for text in [
            "8.8.8.8",
            "1.1.1.1",
            "100.63.255.255",
            "100.128.0.0",
            "172.15.255.255",
            "172.32.0.0",
            "192.167.255.255",
            "169.253.255.255",
            "223.255.255.255",
            "2606:4700:4700::1111",
            "2a00:1450:4001:82b::200e",
            "2001:200::1",
            "::ffff:8.8.8.8",
            "64:ff9b::808:808",
            "2002:808:808::1",
        ] {
            assert_eq!(class(text), None, "{text}");
        }
    }

    #[test]
    fn internal_and_special_addresses_are_classified() {
        use AddressClass::*;
        for (text, expected) in [
            ("0.0.0.0", Unspecified),
            ("0.1.2.3", Unspecified),
            ("127.0.0.1", Loopback),
            ("127.255.255.254", Loopback),
            ("10.0.0.1", Private),
            ("172.16.0.1", Private),
            ("172.31.255.255", Private),
            ("192.168.1.1", Private),
            ("169.254.169.254", LinkLocal),
            ("100.64.0.1", SharedNat),
            ("100.127.255.255", SharedNat),
            ("192.0.2.1", Documentation),
            ("198.18.0.1", Documentation),
            ("198.19.255.255", Documentation),
            ("198.51.100.1", Documentation),
            ("203.0.113.1", Documentation),
            ("192.0.0.8", Reserved),
            ("192.88.99.1", Reserved),
            ("224.0.0.1", Multicast),
            ("239.255.255.250", Multicast),
            ("240.0.0.1", Reserved),
            ("255.255.255.255", Broadcast),
            ("::", Unspecified),
            ("::1", Loopback),
            ("fe80::1", LinkLocal),
            ("febf::1", LinkLocal),
            ("fc00::1", Private),
            ("fd12:3456::1", Private),
            ("fec0::1", Private),
            ("ff02::1", Multicast),
            ("::ffff:127.0.0.1", Loopback),
            ("::ffff:169.254.169.254", LinkLocal),
            ("::ffff:10.0.0.1", Private),
            ("64:ff9b::7f00:1", Loopback),
            ("64:ff9b::a9fe:a9fe", LinkLocal),
            ("2002:7f00:1::", Loopback),
            ("2002:a00:1::1", Private),
            ("::127.0.0.1", Reserved),
            ("64:ff9b:1::1", Reserved),
            ("100::1", Reserved),
            ("5f00::1", Reserved),
            ("2001::1", Reserved),
            ("2001:2::1", Reserved),
            ("2001:db8::1", Documentation),
            ("3fff::1", Documentation),
        ] {
            assert_eq!(class(text), Some(expected), "{text}");
        }
    }

    #[test]
    fn networks_parse_and_contain_their_addresses() {
        let network: IpNetwork = "10.1.0.0/16".parse().unwrap();
        assert!(network.contains("10.1.255.3".parse().unwrap()));
        assert!(network.contains("::ffff:10.1.0.9".parse().unwrap()));
        assert!(!network.contains("10.2.0.1".parse().unwrap()));
        assert!(!network.contains("fd00::1".parse().unwrap()));
        assert_eq!(network.to_string(), "10.1.0.0/16");

        let loopback6: IpNetwork = "::1/128".parse().unwrap();
        assert!(loopback6.contains("::1".parse().unwrap()));
        assert!(!loopback6.contains("::2".parse().unwrap()));

        let single: IpNetwork = "127.0.0.1".parse().unwrap();
        assert_eq!(single.to_string(), "127.0.0.1/32");
        assert!(single.contains("127.0.0.1".parse().unwrap()));
        assert!(!single.contains("127.0.0.2".parse().unwrap()));

        let everything: IpNetwork = "0.0.0.0/0".parse().unwrap();
        assert!(everything.contains("127.0.0.1".parse().unwrap()));
        let ula: IpNetwork = "fd00::/8".parse().unwrap();
        assert!(ula.contains("fd12::1".parse().unwrap()));
        assert!(!ula.contains("fc00::1".parse().unwrap()));
    }

    #[test]
    fn malformed_networks_are_refused() {
        for (text, expected) in [
            (
                "10.1.2.3/16",
                IpNetworkError::HostBits("10.1.2.3/16".into()),
            ),
            ("fd00::1/8", IpNetworkError::HostBits("fd00::1/8".into())),
            (
                "10.0.0.0/33",
                IpNetworkError::PrefixLen("10.0.0.0/33".into()),
            ),
            ("::/129", IpNetworkError::PrefixLen("::/129".into())),
            (
                "10.0.0.0/+8",
                IpNetworkError::PrefixLen("10.0.0.0/+8".into()),
            ),
            ("10.0.0.0/", IpNetworkError::PrefixLen("10.0.0.0/".into())),
            (
                "example.com/8",
                IpNetworkError::Address("example.com/8".into()),
            ),
            ("10.0.0/8", IpNetworkError::Address("10.0.0/8".into())),
            ("", IpNetworkError::Address(String::new())),
        ] {
            assert_eq!(text.parse::<IpNetwork>(), Err(expected), "{text}");
        }
    }

    #[test]
    fn rules_refuse_internal_addresses_unless_allowed() {
        let default = AddressRules::default();
        assert_eq!(
            default.check("127.0.0.1".parse().unwrap()),
            Err(AddressClass::Loopback)
        );
        assert_eq!(default.check("93.184.215.14".parse().unwrap()), Ok(()));

        let private = AddressRules {
            allow_private: true,
            allowed_networks: Vec::new(),
        };
        assert_eq!(private.check("10.0.0.1".parse().unwrap()), Ok(()));
        assert_eq!(private.check("169.254.169.254".parse().unwrap()), Ok(()));
        assert_eq!(
            private.check("0.0.0.0".parse().unwrap()),
            Err(AddressClass::Unspecified)
        );
        assert_eq!(
            private.check("224.0.0.1".parse().unwrap()),
            Err(AddressClass::Multicast)
        );

        let listed = AddressRules {
            allow_private: false,
            allowed_networks: vec!["10.1.0.0/16".parse().unwrap(), "0.0.0.0/0".parse().unwrap()],
        };
        assert_eq!(listed.check("10.1.0.5".parse().unwrap()), Ok(()));
        assert_eq!(
            listed.check("255.255.255.255".parse().unwrap()),
            Err(AddressClass::Broadcast)
        );
        let narrow = AddressRules {
            allow_private: false,
            allowed_networks: vec!["10.1.0.0/16".parse().unwrap()],
        };
        assert_eq!(
            narrow.check("10.2.0.5".parse().unwrap()),
            Err(AddressClass::Private)
        );
        assert_eq!(narrow.check("::ffff:10.1.0.5".parse().unwrap()), Ok(()));
    }
}
