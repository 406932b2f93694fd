// A structure-aware libFuzzer mutator for targets whose input is one serialized protobuf
// message (Debian 12 packages no libprotobuf-mutator; this is the part of it these targets
// need).
//
// Contract: MutateProto parses the input as a message of the prototype's type (an input that
// does not parse starts from the empty message), applies one to four mutations through
// reflection, and writes the result back when it fits max_size (else the input is left as
// it was). A mutation picks one field anywhere in the message tree and:
//   - integer, float, bool, enum: an interesting value (0, 1, powers of two and their
//     neighbours, 2^62, the type's limits, NaN, infinities, denormals, enum numbers no
//     value names), a neighbour of the current value, a flipped bit or random bits;
//   - string, bytes: another string of the message (so that names line up), a dictionary
//     word, libFuzzer's own byte mutations (compare-guided), or a new length; string fields
//     stay valid UTF-8 (proto3 refuses to parse anything else);
//   - message: set, cleared, or recursed into; repeated: an element added, removed,
//     duplicated, swapped or mutated.
// Now and then the whole serialized message goes through libFuzzer's byte mutations
// instead, kept only when it still parses. CrossOverProto splices the repeated fields of
// two inputs. Deterministic for a given seed, as libFuzzer requires.
//
// HISTD_FUZZ_PROTO_MUTATOR(Type, {words...}) defines LLVMFuzzerCustomMutator and
// LLVMFuzzerCustomCrossOver for a target whose input is a serialized Type.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "google/protobuf/message.h"

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

namespace histd::fuzz {

size_t MutateProto(google::protobuf::Message* scratch, uint8_t* data, size_t size,
                   size_t max_size, unsigned seed, const std::vector<std::string>& words);

size_t CrossOverProto(google::protobuf::Message* scratch1, google::protobuf::Message* scratch2,
                      const uint8_t* data1, size_t size1, const uint8_t* data2, size_t size2,
                      uint8_t* out, size_t max_out_size, unsigned seed);

}  // namespace histd::fuzz

#define HISTD_FUZZ_PROTO_MUTATOR(Type, ...)                                                      \
  extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size,       \
                                            unsigned seed) {                                   \
    static const std::vector<std::string> words = __VA_ARGS__;                                 \
    Type scratch;                                                                              \
    return ::histd::fuzz::MutateProto(&scratch, data, size, max_size, seed, words);           \
  }                                                                                            \
  extern "C" size_t LLVMFuzzerCustomCrossOver(const uint8_t* data1, size_t size1,              \
                                              const uint8_t* data2, size_t size2, uint8_t* out, \
                                              size_t max_out_size, unsigned seed) {            \
    Type scratch1, scratch2;                                                                   \
    return ::histd::fuzz::CrossOverProto(&scratch1, &scratch2, data1, size1, data2, size2,     \
                                         out, max_out_size, seed);                             \
  }
