// A read-only set of attempts for the metric functions: every attempt of a vector, or chosen ones (the groups of a
// report split), without copying an attempt.
#pragma once

#include "core/analysis/attempt.h"

#include <cstddef>
#include <iterator>
#include <utility>
#include <vector>

namespace mkb::analysis {

class AttemptSet {
public:
    AttemptSet() = default;
    /// Every attempt of `all`, which must outlive the set (implicit, so a vector can be passed where a set is read).
    AttemptSet(const std::vector<Attempt>& all) : all_(&all) {} // NOLINT(google-explicit-constructor)
    /// The attempts `chosen` points at, in that order; they must outlive the set.
    explicit AttemptSet(std::vector<const Attempt*> chosen) : chosen_(std::move(chosen)) {}

    class Iterator {
    public:
        using iterator_category = std::forward_iterator_tag;
        using value_type = Attempt;
        using difference_type = std::ptrdiff_t;
        using pointer = const Attempt*;
        using reference = const Attempt&;

        Iterator() = default;
        Iterator(const AttemptSet* set, std::size_t index) : set_(set), index_(index) {}
        reference operator*() const { return (*set_)[index_]; }
        pointer operator->() const { return &(*set_)[index_]; }
        Iterator& operator++() {
            ++index_;
            return *this;
        }
        Iterator operator++(int) {
            Iterator before = *this;
            ++index_;
            return before;
        }
        bool operator==(const Iterator& other) const { return index_ == other.index_ && set_ == other.set_; }

    private:
        const AttemptSet* set_ = nullptr;
        std::size_t index_ = 0;
    };

    std::size_t size() const { return all_ ? all_->size() : chosen_.size(); }
    bool empty() const { return size() == 0; }
    const Attempt& operator[](std::size_t index) const { return all_ ? (*all_)[index] : *chosen_[index]; }
    Iterator begin() const { return Iterator(this, 0); }
    Iterator end() const { return Iterator(this, size()); }

private:
    const std::vector<Attempt>* all_ = nullptr;
    std::vector<const Attempt*> chosen_;
};

} // namespace mkb::analysis
