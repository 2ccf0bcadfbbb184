// The paper's figures from an installed dualgibbs: link dualgibbs::paper (it brings dualgibbs::dualgibbs along).
#include <dualgibbs/paper/figures.hpp>

#include <iostream>
#include <string>
#include <vector>

int main() {
  const std::vector<std::string> names = dualgibbs::experiment_names();  // fig5, fig6, ..., accel
  std::cout << names.size() << " figures, the first " << names.front() << ": "
            << dualgibbs::experiment_description(names.front()) << "\n";
  return names.size() >= 7 && names.front() == "fig5" ? 0 : 1;
}
