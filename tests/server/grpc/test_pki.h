// Certificates for the security tests, made with the openssl command line in a temporary
// directory (removed at the end): certificate authorities, server certificates for
// localhost / 127.0.0.1, client certificates with a given CN. EC P-256 keys, valid two days.
//
//   TestPki pki;                      // a fresh directory
//   pki.MakeCa("ca");                 // ca.pem, ca.key
//   pki.MakeCert("server", "ca", "localhost", /*server=*/true);   // server.pem, server.key
//   pki.Path("server.pem"), pki.Read("ca.pem")
// Thread safety: none (one test thread).
#pragma once

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "gtest/gtest.h"

namespace histd::server::testing {

class TestPki {
 public:
  TestPki() {
    char tmpl[] = "/tmp/histd_pki_XXXXXX";
    dir_ = mkdtemp(tmpl);
  }
  ~TestPki() { (void)std::system(("rm -rf '" + dir_ + "'").c_str()); }

  std::string Path(const std::string& name) const { return dir_ + "/" + name; }

  std::string Read(const std::string& name) const {
    std::ifstream in(Path(name), std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }

  void Write(const std::string& name, const std::string& text) const {
    // Written aside and renamed, as a certificate manager does: readers never see half.
    const std::string tmp = Path(name + ".tmp");
    std::ofstream(tmp, std::ios::binary | std::ios::trunc) << text;
    ASSERT_EQ(std::rename(tmp.c_str(), Path(name).c_str()), 0);
  }

  // NAME.pem and NAME.key: a self-signed CA.
  void MakeCa(const std::string& name) {
    Run("openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2"
        " -keyout " + name + ".key -out " + name + ".pem -subj '/CN=histd test CA " + name + "'"
        " -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign");
  }

  // NAME.pem and NAME.key signed by CA: CN `cn`; a server certificate also names localhost
  // and 127.0.0.1 as SANs, a client certificate has clientAuth usage.
  void MakeCert(const std::string& name, const std::string& ca, const std::string& cn,
                bool server) {
    const std::string ext = name + ".ext";
    Write(ext, server ? "subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n"
                      : "extendedKeyUsage=clientAuth\n");
    Run("openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout " + name +
        ".key -out " + name + ".csr -subj '/CN=" + cn + "'");
    Run("openssl x509 -req -days 2 -in " + name + ".csr -CA " + ca + ".pem -CAkey " + ca +
        ".key -set_serial " + std::to_string(++serial_) + " -out " + name + ".pem -extfile " + ext);
  }

 private:
  void Run(const std::string& command) {
    const std::string full = "cd '" + dir_ + "' && " + command + " >/dev/null 2>&1";
    ASSERT_EQ(std::system(full.c_str()), 0) << "failed: " << command;
  }

  std::string dir_;
  int serial_ = 0;
};

}  // namespace histd::server::testing
