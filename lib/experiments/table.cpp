// Table: named numeric columns, an optional label column, CSV output (experiments.hpp).
#include <dualgibbs/experiments/experiments.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

namespace dualgibbs {

namespace {
/// Column names must be non-empty and distinct (column() looks them up by name).
void check_column_names(const std::string& label_column, const std::vector<std::string>& columns) {
  std::vector<std::string> all = columns;
  if (!label_column.empty()) all.push_back(label_column);
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (all[i].empty()) throw std::invalid_argument("Table: column " + std::to_string(i) + " has an empty name");
    for (std::size_t j = 0; j < i; ++j)
      if (all[j] == all[i]) throw std::invalid_argument("Table: column name '" + all[i] + "' is given twice");
  }
}
}  // namespace

Table::Table(std::vector<std::string> columns) : m_columns(std::move(columns)) { check_column_names("", m_columns); }

Table::Table(std::string label_column, std::vector<std::string> columns)
    : m_label_column(std::move(label_column)), m_columns(std::move(columns)) {
  if (m_label_column.empty()) throw std::invalid_argument("Table: the label column needs a name");
  check_column_names(m_label_column, m_columns);
}

void Table::add_row(std::vector<double> row) {
  if (!m_label_column.empty())
    throw std::invalid_argument("Table::add_row: this table has a label column '" + m_label_column + "'; give a label");
  if (row.size() != m_columns.size())
    throw std::invalid_argument("Table::add_row: row has " + std::to_string(row.size()) + " values for " +
                                std::to_string(m_columns.size()) + " columns");
  m_rows.push_back(std::move(row));
}

void Table::add_row(std::string label, std::vector<double> row) {
  if (m_label_column.empty()) throw std::invalid_argument("Table::add_row: this table has no label column");
  if (row.size() != m_columns.size())
    throw std::invalid_argument("Table::add_row: row has " + std::to_string(row.size()) + " values for " +
                                std::to_string(m_columns.size()) + " columns");
  m_labels.push_back(std::move(label));
  m_rows.push_back(std::move(row));
}

std::size_t Table::column_index(const std::string& name) const {
  for (std::size_t i = 0; i < m_columns.size(); ++i)
    if (m_columns[i] == name) return i;
  throw std::invalid_argument("Table: no column '" + name + "'");
}

bool Table::has_column(const std::string& name) const noexcept {
  return std::find(m_columns.begin(), m_columns.end(), name) != m_columns.end();
}

std::vector<double> Table::column(const std::string& name) const {
  const std::size_t c = column_index(name);
  std::vector<double> out;
  out.reserve(m_rows.size());
  for (const auto& r : m_rows) out.push_back(r[c]);
  return out;
}

namespace {
std::string csv_text(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char ch : s) {
    if (ch == '"') out += '"';
    out += ch;
  }
  return out + "\"";
}
}  // namespace

void Table::write_csv(std::ostream& out) const {
  bool first = true;
  if (!m_label_column.empty()) {
    out << csv_text(m_label_column);
    first = false;
  }
  for (const auto& c : m_columns) {
    if (!first) out << ',';
    out << csv_text(c);
    first = false;
  }
  out << '\n';
  char buf[64];
  for (std::size_t r = 0; r < m_rows.size(); ++r) {
    first = true;
    if (!m_label_column.empty()) {
      out << csv_text(m_labels[r]);
      first = false;
    }
    for (double v : m_rows[r]) {
      if (!first) out << ',';
      first = false;
      if (std::isnan(v)) {
        out << "nan";
      } else if (std::isinf(v)) {
        out << (v > 0 ? "inf" : "-inf");
      } else {
        std::snprintf(buf, sizeof buf, "%.10g", v);
        out << buf;
      }
    }
    out << '\n';
  }
}

}  // namespace dualgibbs
