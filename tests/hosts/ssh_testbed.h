// A testbed of hosts on this machine for the ssh layer's tests: each "host" a network namespace
// (proc/net_isolation.h: veth links to a bridge, the test in the root namespace reaching each by
// its address, IPv4 or IPv6) running a real OpenSSH sshd of its own, with a throwaway host key and user key the
// testbed makes. Needs root, ip, nft, ssh-keygen and /usr/sbin/sshd (Debian openssh-server).
//
// Invariant: everything the testbed starts or makes (sshd processes, namespaces, the key folder)
// is gone when it is destroyed; each sshd runs in the foreground (-D) as the testbed's child, so
// it dies with the test even on a SIGKILL (die_with_parent).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "proc/child_process.h"
#include "proc/net_isolation.h"
#include "proc/ssh_control.h"

namespace hapair::testing {

// A process's command line with spaces for NULs; "" when it is gone.
std::string command_line(const std::string& pid);
// The processes (but this one) whose command line mentions `text`, as "pid: cmdline" (an ssh
// master names its control path, a node its run folder).
std::vector<std::string> processes_naming(const std::string& text);

// Why the testbed cannot run here ("" when it can).
std::string ssh_testbed_unavailable();

class SshTestbed {
 public:
  // `hosts` namespaces, an sshd in the first `with_sshd` of them. nullptr with `error` set when
  // something failed (what was made is removed again).
  // `session_environment[i]` (when given): "NAME=VALUE" words host i's sshd sets in every
  // session (sshd_config SetEnv), e.g. a node's injected clock offset.
  static std::unique_ptr<SshTestbed> create(std::size_t hosts, std::size_t with_sshd, std::string& error,
                                            const std::vector<std::string>& session_environment = {});
  ~SshTestbed();

  std::size_t size() const { return hosts_; }
  std::string address(std::size_t host) const { return isolation_->node_address(host); }
  // Its IPv6 address (a ULA made from the IPv4 one: 10.S.T.H gives fd68:0:S:T::H; sshd listens
  // there too).
  std::string address6(std::size_t host) const { return ipv6_of(address(host)); }
  static std::string ipv6_of(const std::string& ipv4);
  std::string namespace_name(std::size_t host) const { return isolation_->node_namespace(host); }
  const std::string& dir() const { return dir_; }
  // How to reach host i as root with the testbed's user key.
  SshTarget target(std::size_t host) const;
  // Options with the testbed's own known_hosts file.
  SshOptions options() const;
  // What host i's sshd logged so far.
  std::string sshd_log(std::size_t host) const;
  // The pids of the sshd processes the testbed started (still running ones).
  std::vector<pid_t> sshd_pids() const;

 private:
  SshTestbed() = default;
  bool build(std::size_t with_sshd, const std::vector<std::string>& session_environment, std::string& error);

  std::size_t hosts_ = 0;
  std::string dir_;
  std::unique_ptr<NetIsolation> isolation_;
  std::vector<ChildProcess> sshd_;
};

}  // namespace hapair::testing
