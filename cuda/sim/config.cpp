// DOTCOMPUTE_CUDA_SIM_DEVICES: how many simulated devices, and what each is.
//   unset or ""          one default device (sm_90, 80 GB, 132 SMs, 48 KiB shared per block, 1024 threads)
//   "2"                  two default devices
//   "cc=8.0,memory=40G;cc=8.6,memory=8G,sms=84"   one device per ';'-separated list of key=value
// Keys: cc, memory (K/M/G/T suffixes), sms, shared (per block), shared_optin, threads (per block),
// threads_per_sm, name. A count and specs may be mixed: "2;cc=8.0" is three devices.
//
// DOTCOMPUTE_CUDA_SIM_SCHEDULE (forward | reverse | random[:seed] | lockstep, default forward) and
// DOTCOMPUTE_CUDA_SIM_TIMEOUT_S (seconds, unset or 0: none) are read at every launch.
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <sstream>

#include "sim.hpp"

namespace dcsim_lib {

namespace {

bool parse_size(const std::string& text, uint64_t& out) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || v <= 0) return false;
  std::string unit(end);
  for (auto& c : unit) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (!unit.empty() && unit.back() == 'B') unit.pop_back();
  if (!unit.empty() && unit.back() == 'I') unit.pop_back();
  double scale = 1;
  if (unit == "K") scale = 1024.0;
  else if (unit == "M") scale = 1024.0 * 1024;
  else if (unit == "G") scale = 1024.0 * 1024 * 1024;
  else if (unit == "T") scale = 1024.0 * 1024 * 1024 * 1024;
  else if (!unit.empty()) return false;
  out = static_cast<uint64_t>(v * scale);
  return true;
}

bool parse_int(const std::string& text, int& out) {
  uint64_t v = 0;
  if (!parse_size(text, v) || v > 1u << 30) return false;
  out = static_cast<int>(v);
  return true;
}

// Every name says "simulated", so no user, log or tool mistakes a simulated device for a real one.
void finish(DeviceConfig& d) {
  if (d.name.empty())
    d.name = "dotcompute simulated GPU sm_" + std::to_string(d.cc_major) + std::to_string(d.cc_minor);
  else if (d.name.find("simulated") == std::string::npos)
    d.name += " (simulated)";
}

}  // namespace

bool parse_devices(const char* text, std::vector<DeviceConfig>& out, std::string& error) {
  out.clear();
  std::string all = text ? text : "";
  if (all.find_first_not_of(" \t") == std::string::npos) all = "1";
  std::stringstream items(all);
  std::string item;
  while (std::getline(items, item, ';')) {
    const auto b = item.find_first_not_of(" \t"), e = item.find_last_not_of(" \t");
    if (b == std::string::npos) continue;
    item = item.substr(b, e - b + 1);
    if (item.find('=') == std::string::npos) {
      char* end = nullptr;
      const long n = std::strtol(item.c_str(), &end, 10);
      if (*end || n < 1 || n > 16) {
        error = "'" + item + "' is neither a device count (1 to 16) nor a list of key=value";
        return false;
      }
      for (long i = 0; i < n; ++i) {
        out.emplace_back();
        finish(out.back());
      }
      continue;
    }
    DeviceConfig d;
    std::stringstream fields(item);
    std::string field;
    while (std::getline(fields, field, ',')) {
      const auto eq = field.find('=');
      if (eq == std::string::npos) {
        error = "'" + field + "' is not key=value";
        return false;
      }
      std::string key = field.substr(0, eq), value = field.substr(eq + 1);
      while (!key.empty() && std::isspace(static_cast<unsigned char>(key.back()))) key.pop_back();
      while (!key.empty() && std::isspace(static_cast<unsigned char>(key.front()))) key.erase(0, 1);
      bool ok = true;
      if (key == "cc") {
        std::string v = value;
        if (v.rfind("sm_", 0) == 0) v = v.substr(3);
        const auto dot = v.find('.');
        if (dot != std::string::npos) {
          ok = parse_int(v.substr(0, dot), d.cc_major) && !v.substr(dot + 1).empty();
          d.cc_minor = ok ? std::atoi(v.substr(dot + 1).c_str()) : 0;
        } else {
          int sm = 0;
          ok = parse_int(v, sm) && sm >= 10;
          d.cc_major = sm / 10;
          d.cc_minor = sm % 10;
        }
        ok = ok && d.cc_major >= 5 && d.cc_major <= 12;
      } else if (key == "memory") {
        ok = parse_size(value, d.memory) && d.memory >= (1u << 20) && d.memory < (1ull << kDeviceShift);
      } else if (key == "sms") {
        ok = parse_int(value, d.sms);
      } else if (key == "shared") {
        ok = parse_int(value, d.shared_per_block);
      } else if (key == "shared_optin") {
        ok = parse_int(value, d.shared_optin);
      } else if (key == "threads") {
        ok = parse_int(value, d.threads_per_block) && d.threads_per_block >= 32 && d.threads_per_block <= 1024;
      } else if (key == "threads_per_sm") {
        ok = parse_int(value, d.threads_per_sm);
      } else if (key == "name") {
        d.name = value;
      } else {
        error = "unknown key '" + key + "' (known: cc, memory, sms, shared, shared_optin, threads, threads_per_sm, name)";
        return false;
      }
      if (!ok) {
        error = "bad value '" + value + "' for " + key;
        return false;
      }
    }
    if (d.shared_optin < d.shared_per_block) d.shared_optin = d.shared_per_block;
    finish(d);
    out.push_back(d);
  }
  if (out.empty() || out.size() > 16) {
    error = "between 1 and 16 devices, please";
    return false;
  }
  return true;
}

bool parse_exec_config(ExecConfig& out, std::string& error) {
  out = ExecConfig();
  const char* schedule = std::getenv("DOTCOMPUTE_CUDA_SIM_SCHEDULE");
  std::string v = schedule ? schedule : "";
  while (!v.empty() && std::isspace(static_cast<unsigned char>(v.back()))) v.pop_back();
  while (!v.empty() && std::isspace(static_cast<unsigned char>(v.front()))) v.erase(0, 1);
  for (auto& c : v) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (v.empty() || v == "forward") {
    out.schedule = DCSIM_SCHEDULE_FORWARD;
  } else if (v == "reverse") {
    out.schedule = DCSIM_SCHEDULE_REVERSE;
  } else if (v == "lockstep") {
    out.schedule = DCSIM_SCHEDULE_LOCKSTEP;
  } else if (v == "random" || v.rfind("random:", 0) == 0) {
    out.schedule = DCSIM_SCHEDULE_RANDOM;
    if (v.size() > 7) {
      const std::string digits = v.substr(7);
      char* end = nullptr;
      errno = 0;
      const unsigned long long seed = std::strtoull(digits.c_str(), &end, 10);
      if (digits.empty() || *end || errno || digits[0] == '-') {
        error = "DOTCOMPUTE_CUDA_SIM_SCHEDULE='" + std::string(schedule) +
                "': the seed after random: must be a non-negative integer";
        return false;
      }
      out.seed = seed;
    }
  } else {
    error = "DOTCOMPUTE_CUDA_SIM_SCHEDULE='" + std::string(schedule) +
            "' is not one of forward, reverse, random, random:<seed>, lockstep";
    return false;
  }
  if (const char* t = std::getenv("DOTCOMPUTE_CUDA_SIM_TIMEOUT_S"); t && *t) {
    char* end = nullptr;
    const double seconds = std::strtod(t, &end);
    while (end && std::isspace(static_cast<unsigned char>(*end))) ++end;
    if (end == t || *end || !(seconds >= 0) || seconds > 1e9) {
      error = "DOTCOMPUTE_CUDA_SIM_TIMEOUT_S='" + std::string(t) + "' is not a number of seconds (0: no timeout)";
      return false;
    }
    out.timeout_s = seconds;
  }
  return true;
}

}  // namespace dcsim_lib
