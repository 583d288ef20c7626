// Two lines check_json_fragments.cmake must name: a key written by hand, and a key built in
// code and closed by hand.
#include <string>

std::string runs(unsigned n) { return "{\"runs\": " + std::to_string(n) + "}"; }

std::string field(const std::string& name, const std::string& value) {
  return "\"" + name + "\":" + value;
}
