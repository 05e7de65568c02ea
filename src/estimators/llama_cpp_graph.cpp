#include "llama_cpp_graph.hpp"

#include <algorithm>
#include <array>
#include <functional>
#include <limits>
#include <list>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "memplan/core/bytes.hpp"
#include "memplan/core/error.hpp"

namespace memplan::detail {

namespace {

// Each event allocates ("A") or frees ("F") one tensor, named as the graph names it; {i} is
// the layer, {p} the one before, #k the k-th tensor of that name in the layer. node* are
// unnamed T x d_model tensors (flash attention's output, the biased projections, the output
// rows). Recorded from llama.cpp v0.5.0 (node-llama-cpp 3.22.1) on the CPU backend.
constexpr std::array<std::string_view, 49> kLlamaNoFaL1{{"A inp_tokens#0",      "A inp_embd#0",
                                                         "A inp_pos#0",         "A attn_inp_k_idxs#0",
                                                         "A attn_inp_v_idxs#0", "A attn_inp_kq_mask#0",
                                                         "A out_ids#0",         "A embd#0",
                                                         "F inp_tokens#0",      "A norm-0#0",
                                                         "A Qcur-0#0",          "A Qcur-0#1",
                                                         "F Qcur-0#0",          "A Vcur-0#0",
                                                         "A Kcur-0#0",          "F norm-0#0",
                                                         "A Kcur-0#1",          "F Kcur-0#0",
                                                         "F inp_pos#0",         "F Kcur-0#1",
                                                         "F attn_inp_k_idxs#0", "F Vcur-0#0",
                                                         "F attn_inp_v_idxs#0", "A kq-0#0",
                                                         "F Qcur-0#1",          "F attn_inp_kq_mask#0",
                                                         "A kqv-0#0",           "F kq-0#0",
                                                         "A kqv_out-0#0",       "F kqv-0#0",
                                                         "A attn_out-0#0",      "F kqv_out-0#0",
                                                         "A node0-0#0",         "F attn_out-0#0",
                                                         "A node1-0#0",         "F embd#0",
                                                         "F out_ids#0",         "F node1-0#0",
                                                         "A norm-0#1",          "A ffn_gate-0#0",
                                                         "A ffn_up-0#0",        "F norm-0#1",
                                                         "A ffn_swiglu-0#0",    "F ffn_gate-0#0",
                                                         "F ffn_up-0#0",        "A ffn_out-0#0",
                                                         "F ffn_swiglu-0#0",    "F node0-0#0",
                                                         "A result_output#0"}};
constexpr std::array<std::string_view, 39> kLlamaNoFaHead{{"A inp_tokens#0",
                                                           "A inp_embd#0",
                                                           "A inp_pos#0",
                                                           "A attn_inp_k_idxs#0",
                                                           "A attn_inp_v_idxs#0",
                                                           "A attn_inp_kq_mask#0",
                                                           "A out_ids#0",
                                                           "A embd#0",
                                                           "F inp_tokens#0",
                                                           "A norm-0#0",
                                                           "A Qcur-0#0",
                                                           "A Qcur-0#1",
                                                           "F Qcur-0#0",
                                                           "A Vcur-0#0",
                                                           "A Kcur-0#0",
                                                           "F norm-0#0",
                                                           "A Kcur-0#1",
                                                           "F Kcur-0#0",
                                                           "F Kcur-0#1",
                                                           "F Vcur-0#0",
                                                           "A kq-0#0",
                                                           "F Qcur-0#1",
                                                           "A kqv-0#0",
                                                           "F kq-0#0",
                                                           "A kqv_out-0#0",
                                                           "F kqv-0#0",
                                                           "A attn_out-0#0",
                                                           "F kqv_out-0#0",
                                                           "F embd#0",
                                                           "A norm-0#1",
                                                           "A ffn_gate-0#0",
                                                           "A ffn_up-0#0",
                                                           "F norm-0#1",
                                                           "A ffn_swiglu-0#0",
                                                           "F ffn_gate-0#0",
                                                           "F ffn_up-0#0",
                                                           "A ffn_out-0#0",
                                                           "F ffn_swiglu-0#0",
                                                           "F attn_out-0#0"}};
constexpr std::array<std::string_view, 30> kLlamaNoFaBody{
    {"A norm-{i}#0",     "A Qcur-{i}#0",     "A Qcur-{i}#1",     "F Qcur-{i}#0",       "A Vcur-{i}#0",
     "A Kcur-{i}#0",     "F norm-{i}#0",     "A Kcur-{i}#1",     "F Kcur-{i}#0",       "F Kcur-{i}#1",
     "F Vcur-{i}#0",     "A kq-{i}#0",       "F Qcur-{i}#1",     "A kqv-{i}#0",        "F kq-{i}#0",
     "A kqv_out-{i}#0",  "F kqv-{i}#0",      "A attn_out-{i}#0", "F kqv_out-{i}#0",    "F ffn_out-{p}#0",
     "A norm-{i}#1",     "A ffn_gate-{i}#0", "A ffn_up-{i}#0",   "F norm-{i}#1",       "A ffn_swiglu-{i}#0",
     "F ffn_gate-{i}#0", "F ffn_up-{i}#0",   "A ffn_out-{i}#0",  "F ffn_swiglu-{i}#0", "F attn_out-{i}#0"}};
constexpr std::array<std::string_view, 40> kLlamaNoFaTail{
    {"A norm-{i}#0",     "A Qcur-{i}#0",         "A Qcur-{i}#1",       "F Qcur-{i}#0",        "A Vcur-{i}#0",
     "A Kcur-{i}#0",     "F norm-{i}#0",         "A Kcur-{i}#1",       "F Kcur-{i}#0",        "F inp_pos#0",
     "F Kcur-{i}#1",     "F attn_inp_k_idxs#0",  "F Vcur-{i}#0",       "F attn_inp_v_idxs#0", "A kq-{i}#0",
     "F Qcur-{i}#1",     "F attn_inp_kq_mask#0", "A kqv-{i}#0",        "F kq-{i}#0",          "A kqv_out-{i}#0",
     "F kqv-{i}#0",      "A attn_out-{i}#0",     "F kqv_out-{i}#0",    "A node0-{i}#0",       "F attn_out-{i}#0",
     "A node1-{i}#0",    "F ffn_out-{p}#0",      "F out_ids#0",        "F node1-{i}#0",       "A norm-{i}#1",
     "A ffn_gate-{i}#0", "A ffn_up-{i}#0",       "F norm-{i}#1",       "A ffn_swiglu-{i}#0",  "F ffn_gate-{i}#0",
     "F ffn_up-{i}#0",   "A ffn_out-{i}#0",      "F ffn_swiglu-{i}#0", "F node0-{i}#0",       "A result_output#0"}};
constexpr std::array<std::string_view, 45> kLlamaFaL1{
    {"A inp_tokens#0",      "A inp_embd#0",         "A inp_pos#0",         "A attn_inp_k_idxs#0",
     "A attn_inp_v_idxs#0", "A attn_inp_kq_mask#0", "A out_ids#0",         "A embd#0",
     "F inp_tokens#0",      "A norm-0#0",           "A Qcur-0#0",          "A Qcur-0#1",
     "F Qcur-0#0",          "A Vcur-0#0",           "A Kcur-0#0",          "F norm-0#0",
     "A Kcur-0#1",          "F Kcur-0#0",           "F inp_pos#0",         "F Kcur-0#1",
     "F attn_inp_k_idxs#0", "F Vcur-0#0",           "F attn_inp_v_idxs#0", "A node0-0#0",
     "F Qcur-0#1",          "F attn_inp_kq_mask#0", "A attn_out-0#0",      "F node0-0#0",
     "A node1-0#0",         "F attn_out-0#0",       "A node2-0#0",         "F embd#0",
     "F out_ids#0",         "F node2-0#0",          "A norm-0#1",          "A ffn_gate-0#0",
     "A ffn_up-0#0",        "F norm-0#1",           "A ffn_swiglu-0#0",    "F ffn_gate-0#0",
     "F ffn_up-0#0",        "A ffn_out-0#0",        "F ffn_swiglu-0#0",    "F node1-0#0",
     "A result_output#0"}};
constexpr std::array<std::string_view, 35> kLlamaFaHead{
    {"A inp_tokens#0",       "A inp_embd#0",   "A inp_pos#0",    "A attn_inp_k_idxs#0", "A attn_inp_v_idxs#0",
     "A attn_inp_kq_mask#0", "A out_ids#0",    "A embd#0",       "F inp_tokens#0",      "A norm-0#0",
     "A Qcur-0#0",           "A Qcur-0#1",     "F Qcur-0#0",     "A Vcur-0#0",          "A Kcur-0#0",
     "F norm-0#0",           "A Kcur-0#1",     "F Kcur-0#0",     "F Kcur-0#1",          "F Vcur-0#0",
     "A node0-0#0",          "F Qcur-0#1",     "A attn_out-0#0", "F node0-0#0",         "F embd#0",
     "A norm-0#1",           "A ffn_gate-0#0", "A ffn_up-0#0",   "F norm-0#1",          "A ffn_swiglu-0#0",
     "F ffn_gate-0#0",       "F ffn_up-0#0",   "A ffn_out-0#0",  "F ffn_swiglu-0#0",    "F attn_out-0#0"}};
constexpr std::array<std::string_view, 26> kLlamaFaBody{
    {"A norm-{i}#0",       "A Qcur-{i}#0",     "A Qcur-{i}#1",     "F Qcur-{i}#0",     "A Vcur-{i}#0",
     "A Kcur-{i}#0",       "F norm-{i}#0",     "A Kcur-{i}#1",     "F Kcur-{i}#0",     "F Kcur-{i}#1",
     "F Vcur-{i}#0",       "A node0-{i}#0",    "F Qcur-{i}#1",     "A attn_out-{i}#0", "F node0-{i}#0",
     "F ffn_out-{p}#0",    "A norm-{i}#1",     "A ffn_gate-{i}#0", "A ffn_up-{i}#0",   "F norm-{i}#1",
     "A ffn_swiglu-{i}#0", "F ffn_gate-{i}#0", "F ffn_up-{i}#0",   "A ffn_out-{i}#0",  "F ffn_swiglu-{i}#0",
     "F attn_out-{i}#0"}};
constexpr std::array<std::string_view, 36> kLlamaFaTail{
    {"A norm-{i}#0",     "A Qcur-{i}#0",         "A Qcur-{i}#1",     "F Qcur-{i}#0",        "A Vcur-{i}#0",
     "A Kcur-{i}#0",     "F norm-{i}#0",         "A Kcur-{i}#1",     "F Kcur-{i}#0",        "F inp_pos#0",
     "F Kcur-{i}#1",     "F attn_inp_k_idxs#0",  "F Vcur-{i}#0",     "F attn_inp_v_idxs#0", "A node0-{i}#0",
     "F Qcur-{i}#1",     "F attn_inp_kq_mask#0", "A attn_out-{i}#0", "F node0-{i}#0",       "A node1-{i}#0",
     "F attn_out-{i}#0", "A node2-{i}#0",        "F ffn_out-{p}#0",  "F out_ids#0",         "F node2-{i}#0",
     "A norm-{i}#1",     "A ffn_gate-{i}#0",     "A ffn_up-{i}#0",   "F norm-{i}#1",        "A ffn_swiglu-{i}#0",
     "F ffn_gate-{i}#0", "F ffn_up-{i}#0",       "A ffn_out-{i}#0",  "F ffn_swiglu-{i}#0",  "F node1-{i}#0",
     "A result_output#0"}};
constexpr std::array<std::string_view, 43> kGpt2NoFaL1{{"A inp_tokens#0",
                                                        "A inp_embd#0",
                                                        "A inp_pos#0",
                                                        "A attn_inp_k_idxs#0",
                                                        "A attn_inp_v_idxs#0",
                                                        "A attn_inp_kq_mask#0",
                                                        "A out_ids#0",
                                                        "A embd#0",
                                                        "F inp_tokens#0",
                                                        "A pos_embd#0",
                                                        "F inp_pos#0",
                                                        "F pos_embd#0",
                                                        "A norm-0#0",
                                                        "A wqkv-0#0",
                                                        "F norm-0#0",
                                                        "F attn_inp_k_idxs#0",
                                                        "A Vcur-0 (cont)#0",
                                                        "F Vcur-0 (cont)#0",
                                                        "F attn_inp_v_idxs#0",
                                                        "A kq-0#0",
                                                        "F wqkv-0#0",
                                                        "F attn_inp_kq_mask#0",
                                                        "A kqv-0#0",
                                                        "F kq-0#0",
                                                        "A kqv_out-0#0",
                                                        "F kqv-0#0",
                                                        "A node0-0#0",
                                                        "F kqv_out-0#0",
                                                        "A node1-0#0",
                                                        "F node0-0#0",
                                                        "A node2-0#0",
                                                        "F embd#0",
                                                        "F out_ids#0",
                                                        "F node2-0#0",
                                                        "A norm-0#1",
                                                        "A ffn_up-0#0",
                                                        "F norm-0#1",
                                                        "A ffn_down-0#0",
                                                        "F ffn_up-0#0",
                                                        "F node1-0#0",
                                                        "A norm#0",
                                                        "F ffn_down-0#0",
                                                        "A result_output#0"}};
constexpr std::array<std::string_view, 32> kGpt2NoFaHead{{"A inp_tokens#0",
                                                          "A inp_embd#0",
                                                          "A inp_pos#0",
                                                          "A attn_inp_k_idxs#0",
                                                          "A attn_inp_v_idxs#0",
                                                          "A attn_inp_kq_mask#0",
                                                          "A out_ids#0",
                                                          "A embd#0",
                                                          "F inp_tokens#0",
                                                          "A pos_embd#0",
                                                          "F inp_pos#0",
                                                          "F pos_embd#0",
                                                          "A norm-0#0",
                                                          "A wqkv-0#0",
                                                          "F norm-0#0",
                                                          "A Vcur-0 (cont)#0",
                                                          "F Vcur-0 (cont)#0",
                                                          "A kq-0#0",
                                                          "F wqkv-0#0",
                                                          "A kqv-0#0",
                                                          "F kq-0#0",
                                                          "A kqv_out-0#0",
                                                          "F kqv-0#0",
                                                          "A node0-0#0",
                                                          "F kqv_out-0#0",
                                                          "F embd#0",
                                                          "A norm-0#1",
                                                          "A ffn_up-0#0",
                                                          "F norm-0#1",
                                                          "A ffn_down-0#0",
                                                          "F ffn_up-0#0",
                                                          "F node0-0#0"}};
constexpr std::array<std::string_view, 20> kGpt2NoFaBody{
    {"A norm-{i}#0",   "A wqkv-{i}#0",  "F norm-{i}#0",     "A Vcur-{i} (cont)#0", "F Vcur-{i} (cont)#0",
     "A kq-{i}#0",     "F wqkv-{i}#0",  "A kqv-{i}#0",      "F kq-{i}#0",          "A kqv_out-{i}#0",
     "F kqv-{i}#0",    "A node0-{i}#0", "F kqv_out-{i}#0",  "F ffn_down-{p}#0",    "A norm-{i}#1",
     "A ffn_up-{i}#0", "F norm-{i}#1",  "A ffn_down-{i}#0", "F ffn_up-{i}#0",      "F node0-{i}#0"}};
constexpr std::array<std::string_view, 31> kGpt2NoFaTail{{"A norm-{i}#0",
                                                          "A wqkv-{i}#0",
                                                          "F norm-{i}#0",
                                                          "F attn_inp_k_idxs#0",
                                                          "A Vcur-{i} (cont)#0",
                                                          "F Vcur-{i} (cont)#0",
                                                          "F attn_inp_v_idxs#0",
                                                          "A kq-{i}#0",
                                                          "F wqkv-{i}#0",
                                                          "F attn_inp_kq_mask#0",
                                                          "A kqv-{i}#0",
                                                          "F kq-{i}#0",
                                                          "A kqv_out-{i}#0",
                                                          "F kqv-{i}#0",
                                                          "A node0-{i}#0",
                                                          "F kqv_out-{i}#0",
                                                          "A node1-{i}#0",
                                                          "F node0-{i}#0",
                                                          "A node2-{i}#0",
                                                          "F ffn_down-{p}#0",
                                                          "F out_ids#0",
                                                          "F node2-{i}#0",
                                                          "A norm-{i}#1",
                                                          "A ffn_up-{i}#0",
                                                          "F norm-{i}#1",
                                                          "A ffn_down-{i}#0",
                                                          "F ffn_up-{i}#0",
                                                          "F node1-{i}#0",
                                                          "A norm#0",
                                                          "F ffn_down-{i}#0",
                                                          "A result_output#0"}};
constexpr std::array<std::string_view, 37> kGpt2FaL1{{"A inp_tokens#0",
                                                      "A inp_embd#0",
                                                      "A inp_pos#0",
                                                      "A attn_inp_k_idxs#0",
                                                      "A attn_inp_v_idxs#0",
                                                      "A attn_inp_kq_mask#0",
                                                      "A out_ids#0",
                                                      "A embd#0",
                                                      "F inp_tokens#0",
                                                      "A pos_embd#0",
                                                      "F inp_pos#0",
                                                      "F pos_embd#0",
                                                      "A norm-0#0",
                                                      "A wqkv-0#0",
                                                      "F norm-0#0",
                                                      "F attn_inp_k_idxs#0",
                                                      "F attn_inp_v_idxs#0",
                                                      "A node0-0#0",
                                                      "F wqkv-0#0",
                                                      "F attn_inp_kq_mask#0",
                                                      "A node1-0#0",
                                                      "F node0-0#0",
                                                      "A node2-0#0",
                                                      "F node1-0#0",
                                                      "A node3-0#0",
                                                      "F embd#0",
                                                      "F out_ids#0",
                                                      "F node3-0#0",
                                                      "A norm-0#1",
                                                      "A ffn_up-0#0",
                                                      "F norm-0#1",
                                                      "A ffn_down-0#0",
                                                      "F ffn_up-0#0",
                                                      "F node2-0#0",
                                                      "A norm#0",
                                                      "F ffn_down-0#0",
                                                      "A result_output#0"}};
constexpr std::array<std::string_view, 26> kGpt2FaHead{
    {"A inp_tokens#0",       "A inp_embd#0", "A inp_pos#0", "A attn_inp_k_idxs#0", "A attn_inp_v_idxs#0",
     "A attn_inp_kq_mask#0", "A out_ids#0",  "A embd#0",    "F inp_tokens#0",      "A pos_embd#0",
     "F inp_pos#0",          "F pos_embd#0", "A norm-0#0",  "A wqkv-0#0",          "F norm-0#0",
     "A node0-0#0",          "F wqkv-0#0",   "A node1-0#0", "F node0-0#0",         "F embd#0",
     "A norm-0#1",           "A ffn_up-0#0", "F norm-0#1",  "A ffn_down-0#0",      "F ffn_up-0#0",
     "F node1-0#0"}};
constexpr std::array<std::string_view, 14> kGpt2FaBody{
    {"A norm-{i}#0", "A wqkv-{i}#0", "F norm-{i}#0", "A node0-{i}#0", "F wqkv-{i}#0", "A node1-{i}#0", "F node0-{i}#0",
     "F ffn_down-{p}#0", "A norm-{i}#1", "A ffn_up-{i}#0", "F norm-{i}#1", "A ffn_down-{i}#0", "F ffn_up-{i}#0",
     "F node1-{i}#0"}};
constexpr std::array<std::string_view, 25> kGpt2FaTail{
    {"A norm-{i}#0",        "A wqkv-{i}#0",     "F norm-{i}#0",  "F attn_inp_k_idxs#0",
     "F attn_inp_v_idxs#0", "A node0-{i}#0",    "F wqkv-{i}#0",  "F attn_inp_kq_mask#0",
     "A node1-{i}#0",       "F node0-{i}#0",    "A node2-{i}#0", "F node1-{i}#0",
     "A node3-{i}#0",       "F ffn_down-{p}#0", "F out_ids#0",   "F node3-{i}#0",
     "A norm-{i}#1",        "A ffn_up-{i}#0",   "F norm-{i}#1",  "A ffn_down-{i}#0",
     "F ffn_up-{i}#0",      "F node2-{i}#0",    "A norm#0",      "F ffn_down-{i}#0",
     "A result_output#0"}};

using Part = std::vector<std::string>;

Part part_of(std::span<const std::string_view> list) { return Part(list.begin(), list.end()); }

struct Parts {
  Part one, head, body, tail;
};

Parts recorded(bool gpt2, bool fa) {
  if (gpt2) {
    return fa ? Parts{part_of(kGpt2FaL1), part_of(kGpt2FaHead), part_of(kGpt2FaBody), part_of(kGpt2FaTail)}
              : Parts{part_of(kGpt2NoFaL1), part_of(kGpt2NoFaHead), part_of(kGpt2NoFaBody), part_of(kGpt2NoFaTail)};
  }
  return fa ? Parts{part_of(kLlamaFaL1), part_of(kLlamaFaHead), part_of(kLlamaFaBody), part_of(kLlamaFaTail)}
            : Parts{part_of(kLlamaNoFaL1), part_of(kLlamaNoFaHead), part_of(kLlamaNoFaBody), part_of(kLlamaNoFaTail)};
}

std::size_t find_from(const Part& p, const std::string& event, std::size_t from = 0) {
  const auto it = std::find(p.begin() + static_cast<std::ptrdiff_t>(from), p.end(), event);
  if (it == p.end()) throw Error(ErrorKind::internal, "llama.cpp graph: no event '" + event + "'");
  return static_cast<std::size_t>(it - p.begin());
}

void insert_at(Part& p, std::size_t at, const Part& events) {
  p.insert(p.begin() + static_cast<std::ptrdiff_t>(at), events.begin(), events.end());
}

// The recorded graphs are for f16 caches. A quantised K or V cache (heads a multiple of 64
// wide) adds Hadamard rotations of q, k, v and the attention output; an f32 cache under flash
// attention adds an f16 copy of the cache. This rewrites a recorded part into the graph
// llama.cpp builds then (recorded the same way for every cache type; the block type itself
// never matters).
Part rewrite(Part ev, const LlamaCppGraphShape& s, bool first, bool last) {
  const bool krot = s.k_quantized && s.d_head % 64 == 0, vrot = s.v_quantized && s.d_head % 64 == 0;
  const bool kcast = s.flash_attn && s.k_f32, vcast = s.flash_attn && s.v_f32;
  if (!krot && !vrot && !kcast && !vcast) return ev;
  const std::string X = first ? "0" : "{i}";
  const auto at = [&](const std::string& name) { return name + "-" + X + "#0"; };
  if (first) {
    if (krot) insert_at(ev, find_from(ev, "A inp_embd#0") + 1, {"A attn_inp_k_rot#0"});
    if (vrot) insert_at(ev, find_from(ev, "A inp_pos#0") + 1, {"A attn_inp_v_rot#0"});
  }
  const std::string core = s.flash_attn ? "A " + at("node0") : "A " + at("kq");
  if (s.gpt2) {
    // Q, K and V are views of the fused projection W: a rotation copies first, and W is freed
    // at its last use.
    const std::string W = "F " + at("wqkv");
    const std::size_t a = find_from(ev, "F " + at("norm")) + 1, b = find_from(ev, core);
    std::vector<std::string> uses;
    if (krot) uses.emplace_back("Qc");
    if (vrot) uses.emplace_back("Vc");
    if (krot) uses.emplace_back("Kc");
    if (!krot) uses.emplace_back("SK");
    if (!vrot) uses.emplace_back("SV");
    if (!krot) uses.emplace_back("CORE");
    const auto free_w = [&](const char* use) { return uses.back() == use ? Part{W} : Part{}; };
    const std::string qc = "Qcur-" + X + " (cont)#0", kc = "Kcur-" + X + " (cont)#0", vc = "Vcur-" + X + " (cont)#0";
    Part seg;
    const auto add = [&](const Part& more) { seg.insert(seg.end(), more.begin(), more.end()); };
    if (krot) {
      add({"A " + qc});
      add(free_w("Qc"));
      add({"A " + at("qrot"), "F " + qc});
    }
    if (vrot) {
      add({"A " + vc});
      add(free_w("Vc"));
      add({"A " + at("vrot"), "F " + vc});
    }
    if (krot) {
      add({"A " + kc});
      add(free_w("Kc"));
      add({"A " + at("krot")});
      if (last) add({"F attn_inp_k_rot#0"});
      add({"F " + kc});
    }
    add(krot ? Part{"F " + at("krot")} : free_w("SK"));
    if (last) add({"F attn_inp_k_idxs#0"});
    if (!s.flash_attn) {
      add({"A " + vc});
      add(free_w("SV"));
      add({"F " + vc});
    } else {
      add(vrot ? Part{"F " + at("vrot")} : free_w("SV"));
    }
    if (last) add({"F attn_inp_v_idxs#0"});
    ev.erase(ev.begin() + static_cast<std::ptrdiff_t>(a), ev.begin() + static_cast<std::ptrdiff_t>(b));
    insert_at(ev, a, seg);
    if (krot) ev[find_from(ev, core) + 1] = "F " + at("qrot");
  } else {
    if (krot) {
      ev[find_from(ev, "F Qcur-" + X + "#1", find_from(ev, core))] = "F " + at("qrot");
      insert_at(ev, find_from(ev, "F Qcur-" + X + "#0") + 1, {"A " + at("qrot"), "F Qcur-" + X + "#1"});
      const std::size_t j = find_from(ev, "F Kcur-" + X + "#1");
      Part k{"A " + at("krot")};
      if (last) k.emplace_back("F attn_inp_k_rot#0");
      k.insert(k.end(), {"F Kcur-" + X + "#1", "F " + at("krot")});
      ev.erase(ev.begin() + static_cast<std::ptrdiff_t>(j));
      insert_at(ev, j, k);
    }
    if (vrot) {
      const std::size_t j = find_from(ev, "A " + at("Vcur"));
      ev[find_from(ev, "F " + at("Vcur"), j)] = "F " + at("vrot");
      insert_at(ev, j + 1, {"A " + at("vrot"), "F " + at("Vcur")});
    }
  }
  if (s.flash_attn) {
    Part casts, frees;
    if (kcast) casts.push_back("A " + at("kcast")), frees.push_back("F " + at("kcast"));
    if (vcast) casts.push_back("A " + at("vcast")), frees.push_back("F " + at("vcast"));
    insert_at(ev, find_from(ev, core), casts);
    insert_at(ev, find_from(ev, core) + 2, frees);
    if (vrot) {  // the output's rotation, allocated before the next tensor after attention
      std::size_t m = find_from(ev, core) + 1;
      while (!ev[m].starts_with("A ")) ++m;
      ev[find_from(ev, "F " + at("node0"), m)] = "F " + at("orot");
      Part o{"A " + at("orot")};
      if (last) o.emplace_back("F attn_inp_v_rot#0");
      o.push_back("F " + at("node0"));
      insert_at(ev, m, o);
    }
  }
  return ev;
}

// The tensor's kind: its name without the layer suffix and the copy index.
std::string_view kind_of(std::string_view name) {
  name = name.substr(0, name.find('#'));
  name = name.substr(0, name.find(' '));
  if (name.starts_with("node")) return "node";
  const std::size_t dash = name.rfind('-');
  if (dash != std::string_view::npos && dash + 1 < name.size() &&
      (name[dash + 1] == '{' || (name[dash + 1] >= '0' && name[dash + 1] <= '9'))) {
    name = name.substr(0, dash);
  }
  return name;
}

// Bytes of an f32 (or i32) tensor of a x b elements.
std::uint64_t f32_matrix(std::uint64_t a, std::uint64_t b) {
  return checked_mul(checked_mul(a, b, "compute buffer"), 4, "compute buffer");
}

// A quantised cache's Hadamard rotation matrix (llama-kv-cache.cpp attn_rot_k/v), f32: K's the
// half of the first power of two from 64 up that does not divide d_head, squared; V's 64 x 64
// (d_head 0).
std::uint64_t rotation_bytes(std::uint64_t d_head) {
  if (d_head == 0) return std::uint64_t{64} * 64 * 4;
  std::uint64_t n = 64;
  while (d_head % n == 0) n *= 2;
  return checked_mul(checked_mul(n / 2, n / 2, "c"), 4, "c");
}

// `selected`: the tensor holds only the output rows (the last layer past its get_rows).
std::uint64_t tensor_bytes(std::string_view kind, const LlamaCppGraphShape& s, bool selected) {
  const std::uint64_t outputs = s.n_outputs == 0 ? s.n_ubatch : std::min(s.n_outputs, s.n_ubatch);
  const std::uint64_t T = selected ? outputs : s.n_ubatch;
  const auto f32 = [&](std::uint64_t width) { return checked_mul(checked_mul(T, width, "compute buffer"), 4, "c"); };
  const std::uint64_t q = checked_mul(s.n_heads, s.d_head, "c"), kv = checked_mul(s.n_kv_heads, s.d_head, "c");
  if (kind == "out_ids") return checked_mul(outputs, 4, "c");  // i32 per output
  if (kind == "inp_tokens") return f32(1);                     // i32 per token
  if (kind == "inp_pos") return f32(s.positions);              // i32 per token, or M-RoPE's four
  if (kind == "attn_inp_k_idxs") return f32(2);                // i64 per token
  // Without flash attention the V cache is transposed: one i64 index per element.
  if (kind == "attn_inp_v_idxs") return s.flash_attn ? f32(2) : checked_mul(checked_mul(T, kv, "c"), 8, "c");
  const std::uint64_t streams = std::max<std::uint64_t>(s.n_seq, 1);
  const std::uint64_t rows = checked_mul(ceil_div(T, streams), streams, "c");  // each stream's rows, padded
  if (kind == "attn_inp_kq_mask") return checked_mul(checked_mul(s.n_kv, rows, "c"), s.flash_attn ? 2 : 4, "c");
  if (kind == "Qcur" || kind == "kqv" || kind == "kqv_out") return f32(q);
  if (kind == "Kcur" || kind == "Vcur") return f32(kv);
  if (kind == "wqkv") return f32(checked_add(q, checked_mul(2, kv, "c"), "c"));
  if (kind == "kq") return checked_mul(f32(s.n_kv), s.n_heads, "c");
  if (kind == "ffn_gate" || kind == "ffn_up" || kind == "ffn_swiglu") return f32(s.d_ff);
  if (kind == "result_output") return f32(s.vocab);
  // A quantised cache's Hadamard rotations (llama-kv-cache.cpp attn_rot_k/v) and an f32
  // cache's f16 copy for flash attention (build_attn_mha's ggml_cast).
  if (kind == "attn_inp_k_rot") return rotation_bytes(s.d_head);
  if (kind == "attn_inp_v_rot") return rotation_bytes(0);
  if (kind == "qrot" || kind == "orot") return f32(q);
  if (kind == "krot" || kind == "vrot") return f32(kv);
  if (kind == "kcast" || kind == "vcast") return checked_mul(checked_mul(s.n_kv, kv, "c"), 2, "c");
  return f32(s.d_model);  // inp_embd, embd, pos_embd, norm, attn_out, ffn_out, ffn_down, node*
}

std::string expand(std::string_view e, std::uint64_t layer) {
  std::string out;
  for (std::size_t k = 0; k < e.size(); ++k) {
    if (e.substr(k, 3) == "{i}") {
      out += std::to_string(layer);
      k += 2;
    } else if (e.substr(k, 3) == "{p}") {
      out += std::to_string(layer - 1);
      k += 2;
    } else {
      out += e[k];
    }
  }
  return out;
}

// ggml_dyn_tallocr: free blocks in address order; the last one is the open end.
class Allocator {
 public:
  explicit Allocator(std::uint64_t alignment) : alignment_(alignment) {}
  std::uint64_t allocate(std::uint64_t size) {
    size = checked_mul(ceil_div(size, alignment_), alignment_, "compute buffer");
    auto best = free_.end();
    for (auto it = free_.begin(); std::next(it) != free_.end(); ++it) {
      if (it->size >= size && (best == free_.end() || it->size <= best->size)) best = it;
    }
    if (best == free_.end()) best = std::prev(free_.end());
    const std::uint64_t at = best->offset;
    best->offset += size;
    best->size -= size;
    if (best->size == 0 && std::next(best) != free_.end()) free_.erase(best);
    peak_ = std::max(peak_, checked_add(at, size, "compute buffer"));
    return at;
  }
  void release(std::uint64_t at, std::uint64_t size) {
    size = ceil_div(size, alignment_) * alignment_;
    auto next = free_.begin();
    while (next != free_.end() && next->offset < at) ++next;
    auto it = free_.insert(next, Block{at, size});
    if (next != free_.end() && at + size == next->offset) {
      it->size += next->size;
      free_.erase(next);
    }
    if (it != free_.begin()) {
      auto prev = std::prev(it);
      if (prev->offset + prev->size == it->offset) {
        prev->size += it->size;
        free_.erase(it);
      }
    }
  }
  std::uint64_t peak() const { return peak_; }

 private:
  std::uint64_t alignment_;
  struct Block {
    std::uint64_t offset, size;
  };
  std::list<Block> free_{Block{0, std::uint64_t{1} << 62}};
  std::uint64_t peak_ = 0;
};

// The last layer keeps the output rows with two get_rows (llm_graph's inp_out_ids): of the
// attention's output, then of the residual, whose free (`residual_free`) follows at once.
// Returns the index of the first of them; every tensor allocated from there on is that size.
std::size_t first_selected(const Part& p, const std::string& residual_free) {
  int allocations = 0;
  for (std::size_t k = find_from(p, residual_free); k > 0; --k) {
    if (p[k - 1][0] == 'A' && ++allocations == 2) return k - 1;
  }
  throw Error(ErrorKind::internal, "llama.cpp graph: no get_rows before '" + residual_free + "'");
}

// One allocation ('A') or free ('F') of the tensor named, in a graph's order.
struct GraphEvent {
  char op;
  std::string name;
};

// The events of a Mamba (version 1) or Mamba-2 graph of `layers` layers, recorded from
// llama.cpp v0.5.0 on the CPU. Names are kinds with the layer after '-'; in-place ops keep
// their parent's allocation and are not events. The residual stream stays in `embd` for
// Mamba; for Mamba-2 it moves into each layer's output projection (`out`), freeing the last.
std::vector<GraphEvent> ssm_events(std::uint64_t version, std::uint64_t layers) {
  std::vector<GraphEvent> ev;
  const auto a = [&](std::string n) { ev.push_back({'A', std::move(n)}); };
  const auto f = [&](std::string n) { ev.push_back({'F', std::move(n)}); };
  for (const char* n : {"inp_tokens", "inp_embd", "rs_s_copy", "out_ids", "embd"}) a(n);
  f("inp_tokens");
  a("conv_rows-0");
  for (std::uint64_t il = 0; il < layers; ++il) {
    const std::string i = "-" + std::to_string(il);
    const bool last = il + 1 == layers;
    a("norm" + i), a("ssm_in" + i), f("norm" + i);
    a("conv_x" + i), f("conv_rows" + i), a("conv" + i), f("conv_x" + i);
    if (version == 1) {
      a("x_db" + i), a("dt_cont" + i), a("dt" + i), f("dt_cont" + i), a("scan" + i), f("dt" + i), f("x_db" + i);
    } else {
      a("dt_cont" + i), a("scan" + i), f("dt_cont" + i);
    }
    // The next layer's conv rows are gathered here; after the last layer the state ids go.
    last ? f("rs_s_copy") : a("conv_rows-" + std::to_string(il + 1));
    if (version == 1) {
      a("z" + i), f("ssm_in" + i), f("scan" + i), a("y" + i), f("z" + i), f("conv" + i), a("out" + i), f("y" + i);
    } else {
      a("z" + i), f("ssm_in" + i), a("xd" + i), f("conv" + i), f("scan" + i), a("y" + i), f("z" + i), f("xd" + i);
      a("gnorm" + i), f("y" + i), a("out" + i), f("gnorm" + i);
    }
    const std::string stream = version == 1 || il == 0 ? "embd" : "out-" + std::to_string(il - 1);
    if (!last) {
      f(version == 1 ? "out" + i : stream);
      continue;
    }
    // The last layer keeps the output rows: of its output, then of the residual stream.
    a("sel_cur"), f("out" + i), a("sel_inp"), f(stream), f("out_ids"), f("sel_inp"), a("result_output");
  }
  return ev;
}

std::uint64_t ssm_tensor_bytes(std::string_view name, const LlamaCppSsmGraphShape& s) {
  const std::string_view kind = name.substr(0, name.find('-'));
  const std::uint64_t T = s.n_ubatch, S = std::max<std::uint64_t>(s.n_seq, 1);
  const std::uint64_t outputs = s.n_outputs == 0 ? T : std::min(s.n_outputs, T);
  const auto f32 = f32_matrix;
  // The convolution's channels: Mamba's inner width, Mamba-2's also B and C of every group.
  const std::uint64_t channels = checked_add(s.d_inner, checked_mul(2, checked_mul(s.groups, s.d_state, "c"), "c"),
                                             "c");
  if (kind == "inp_tokens") return f32(T, 1);
  if (kind == "rs_s_copy") return f32(S, 1);  // an i32 state slot per sequence
  if (kind == "out_ids") return f32(outputs, 1);
  if (kind == "inp_embd" || kind == "embd" || kind == "norm" || kind == "out") return f32(T, s.d_model);
  if (kind == "conv_rows") return f32(checked_mul(s.d_conv - 1, channels, "c"), S);
  if (kind == "ssm_in") {
    const std::uint64_t width = s.version == 1 ? checked_mul(2, s.d_inner, "c")
                                               : checked_add(checked_add(s.d_inner, channels, "c"), s.heads, "c");
    return f32(T, width);
  }
  if (kind == "conv_x") return f32(checked_mul(checked_add(s.d_conv - 1, T / S, "c"), channels, "c"), S);
  if (kind == "conv") return f32(T, channels);
  if (kind == "x_db") return f32(T, checked_add(s.dt_rank, checked_mul(2, s.d_state, "c"), "c"));
  if (kind == "dt_cont") return f32(T, s.version == 1 ? s.dt_rank : s.heads);
  if (kind == "scan") {  // every token's output, then each sequence's new state
    return checked_add(f32(T, s.d_inner), f32(checked_mul(s.d_state, s.d_inner, "c"), S), "compute buffer");
  }
  if (kind == "dt" || kind == "z" || kind == "y" || kind == "xd" || kind == "gnorm") return f32(T, s.d_inner);
  if (kind == "sel_cur" || kind == "sel_inp") return f32(outputs, s.d_model);
  if (kind == "result_output") return f32(outputs, s.vocab);
  throw Error(ErrorKind::internal, "llama.cpp Mamba graph: no size for '" + std::string(name) + "'");
}

}  // namespace

std::uint64_t llama_cpp_graph_bytes(const LlamaCppGraphShape& s) {
  Allocator a(std::max<std::uint64_t>(s.alignment, 1));
  std::map<std::string, std::pair<std::uint64_t, std::uint64_t>, std::less<>> live;
  // From `selected_from` on, the last layer's tensors hold only the output rows.
  const auto run = [&](const Part& list, std::uint64_t layer, std::size_t selected_from) {
    for (std::size_t k = 0; k < list.size(); ++k) {
      const std::string& e = list[k];
      const std::string name = expand(std::string_view(e).substr(2), layer);
      if (e[0] == 'A') {
        const std::uint64_t bytes = tensor_bytes(kind_of(name), s, k >= selected_from);
        live[name] = {a.allocate(bytes), bytes};
      } else {
        const auto it = live.find(name);
        if (it == live.end())
          throw Error(ErrorKind::internal, "llama.cpp graph: '" + name + "' freed, never allocated");
        a.release(it->second.first, it->second.second);
        live.erase(it);
      }
    }
  };
  const Parts p = recorded(s.gpt2, s.flash_attn);
  constexpr std::size_t kNone = std::numeric_limits<std::size_t>::max();
  if (s.n_layers <= 1) {
    const Part one = rewrite(p.one, s, true, true);
    run(one, 0, first_selected(one, "F embd#0"));
  } else {
    run(rewrite(p.head, s, true, false), 0, kNone);
    const Part body = rewrite(p.body, s, false, false);
    for (std::uint64_t il = 1; il + 1 < s.n_layers; ++il) run(body, il, kNone);
    const Part tail = rewrite(p.tail, s, false, true);
    run(tail, s.n_layers - 1, first_selected(tail, s.gpt2 ? "F ffn_down-{p}#0" : "F ffn_out-{p}#0"));
  }
  return a.peak();
}

// Gemma 3's graph, its tensors named by kind, the layer after '-' and, for the inputs, the
// cache they serve ('w' the sliding-window one, 'g' the global one).
std::vector<GraphEvent> gemma3_events(bool flash_attn, const std::vector<bool>& sliding) {
  std::vector<GraphEvent> ev;
  const auto a = [&](std::string n) { ev.push_back({'A', std::move(n)}); };
  const auto f = [&](std::string n) { ev.push_back({'F', std::move(n)}); };
  const std::size_t L = sliding.size();
  // The inputs, the first layer's cache's first: its row indices and mask, then the other's.
  a("inp_tokens"), a("inp_embd"), a("inp_pos");
  std::vector<char> caches{sliding.front() ? 'w' : 'g'};
  for (const bool s : sliding) {
    if ((s ? 'w' : 'g') != caches.front()) {
      caches.push_back(s ? 'w' : 'g');
      break;
    }
  }
  for (const char c : caches) a(std::string("k_idxs-") + c), a(std::string("v_idxs-") + c), a(std::string("mask-") + c);
  a("out_ids"), a("embd"), f("inp_tokens");
  for (std::size_t il = 0; il < L; ++il) {
    const std::string i = "-" + std::to_string(il);
    const std::string cache(1, sliding[il] ? 'w' : 'g');
    bool last_of_kind = true;
    for (std::size_t j = il + 1; j < L; ++j) last_of_kind = last_of_kind && sliding[j] != sliding[il];
    const bool last = il + 1 == L;
    const std::string residual = il == 0 ? "embd" : "ffn_out-" + std::to_string(il - 1);
    a("attn_norm" + i), a("q" + i), a("q_norm" + i), f("q" + i), a("k" + i), a("k_norm" + i), f("k" + i);
    if (last) f("inp_pos");
    a("v" + i), f("attn_norm" + i), f("k_norm" + i);
    if (last_of_kind) f("k_idxs-" + cache);
    f("v" + i);
    if (last_of_kind) f("v_idxs-" + cache);
    if (flash_attn) {
      a("fa" + i), f("q_norm" + i);
      if (last_of_kind) f("mask-" + cache);
      a("attn" + i), f("fa" + i);
    } else {
      a("kq" + i), f("q_norm" + i);
      if (last_of_kind) f("mask-" + cache);
      a("kqv" + i), f("kq" + i), a("kqv_out" + i), f("kqv" + i), a("attn" + i), f("kqv_out" + i);
    }
    // The output projection, normed, takes the residual in place; the MLP's output likewise.
    std::string stream = "attn" + i;
    if (last) {  // only the output rows go on: of the attention's output, then of the residual
      a("sel_attn"), f("attn" + i), a("sel_residual"), f(residual), f("out_ids"), f("sel_residual");
      stream = "sel_attn";
    } else {
      f(residual);
    }
    a("ffn_norm" + i), a("gate" + i), a("up" + i), f("ffn_norm" + i), a("geglu" + i), f("gate" + i), f("up" + i);
    a("ffn_out" + i), f("geglu" + i), f(stream);
  }
  a("result_output");
  return ev;
}

std::uint64_t gemma3_tensor_bytes(std::string_view name, const LlamaCppGemma3GraphShape& s, bool last_layer) {
  const std::string_view kind = name.substr(0, name.find('-'));
  const char cache = name.back();
  const std::uint64_t T = s.n_ubatch;
  const std::uint64_t outputs = s.n_outputs == 0 ? T : std::min(s.n_outputs, T);
  const std::uint64_t rows = last_layer ? outputs : T;  // past the last layer's selection
  const auto f32 = f32_matrix;
  const std::uint64_t q = checked_mul(s.n_heads, s.d_head, "c"), kv = checked_mul(s.n_kv_heads, s.d_head, "c");
  const std::uint64_t cells = cache == 'w' ? s.window_cells : s.global_cells;
  if (kind == "inp_tokens" || kind == "inp_pos") return f32(T, 1);
  if (kind == "out_ids") return f32(outputs, 1);
  if (kind == "k_idxs") return f32(T, 2);  // an i64 a token
  if (kind == "v_idxs") return s.flash_attn ? f32(T, 2) : checked_mul(checked_mul(T, kv, "c"), 8, "c");
  if (kind == "mask") return checked_mul(checked_mul(cells, T, "c"), s.flash_attn ? 2 : 4, "compute buffer");
  if (kind == "q" || kind == "q_norm" || kind == "fa" || kind == "kqv" || kind == "kqv_out") return f32(T, q);
  if (kind == "k" || kind == "k_norm" || kind == "v") return f32(T, kv);
  if (kind == "sel_attn" || kind == "sel_residual") return f32(outputs, s.d_model);
  if (kind == "gate" || kind == "up" || kind == "geglu") return f32(rows, s.d_ff);
  if (kind == "result_output") return f32(outputs, s.vocab);
  if (kind == "ffn_norm" || kind == "ffn_out") return f32(rows, s.d_model);
  return f32(T, s.d_model);  // the embeddings, their scaled copy, the attention's norm and output
}

// Qwen3's graph, its tensors named by kind and layer (the inputs by kind alone).
std::vector<GraphEvent> qwen3_events(const LlamaCppQwen3GraphShape& s) {
  std::vector<GraphEvent> ev;
  const auto a = [&](std::string n) { ev.push_back({'A', std::move(n)}); };
  const auto f = [&](std::string n) { ev.push_back({'F', std::move(n)}); };
  const std::size_t L = s.experts.size();
  // A quantised cache's Hadamard rotations: K's matrix among the inputs (and each layer's
  // queries and keys rotated), V's (each layer's values rotated, the attention's output back).
  a("inp_tokens"), a("inp_embd");
  if (s.k_quantized) a("k_rot");
  a("inp_pos");
  if (s.v_quantized) a("v_rot");
  a("k_idxs"), a("v_idxs"), a("mask"), a("out_ids");
  // The tokens' embeddings; Qwen3-VL's padded to the deepstack width, the rows freed.
  a("embd"), f("inp_tokens");
  if (s.deepstack > 0) a("padded"), f("embd");
  for (std::size_t il = 0; il < L; ++il) {
    const std::string i = "-" + std::to_string(il);
    const bool last = il + 1 == L;
    // The residual stream: the embeddings (a view of the padded ones, freed with them), then
    // each layer's output.
    const std::string residual = il > 0 ? "ffn_out-" + std::to_string(il - 1) : s.deepstack > 0 ? "" : "embd";
    a("attn_norm" + i), a("q" + i), a("q_norm" + i), f("q" + i);
    std::string query = "q_norm" + i, values = "v" + i;
    if (s.k_quantized) a("qrot" + i), f(query), query = "qrot" + i;
    a(values);
    if (s.v_quantized) a("vrot" + i), f(values), values = "vrot" + i;
    a("k" + i), f("attn_norm" + i), a("k_norm" + i), f("k" + i);
    if (last) f("inp_pos");
    if (s.k_quantized) {
      a("krot" + i);
      if (last) f("k_rot");
      f("k_norm" + i), f("krot" + i);
    } else {
      f("k_norm" + i);
    }
    if (last) f("k_idxs");
    f(values);
    if (last) f("v_idxs");
    if (s.flash_attn) {
      a("fa" + i), f(query);
      if (last) f("mask");
      std::string out = "fa" + i;
      if (s.v_quantized) {
        a("orot" + i);
        if (last) f("v_rot");
        f(out), out = "orot" + i;
      }
      a("attn" + i), f(out);
    } else {
      a("kq" + i), f(query);
      if (last) f("mask");
      a("kqv" + i), f("kq" + i), a("kqv_out" + i), f("kqv" + i), a("attn" + i), f("kqv_out" + i);
    }
    // The residual added to the attention's output in place; in the last layer only the
    // output rows of both go on.
    std::string stream = "attn" + i;
    if (last) {
      a("sel_attn"), f("attn" + i), a("sel_residual");
      if (!residual.empty()) f(residual);
      f("out_ids"), f("sel_residual");
      stream = "sel_attn";
    } else if (!residual.empty()) {
      f(residual);
    }
    a("ffn_norm" + i);
    if (s.experts[il]) {
      a("logits" + i), a("argsort" + i), a("weights" + i), f("logits" + i), a("weights_sum" + i);
      a("weights_norm" + i), f("weights" + i), f("weights_sum" + i);
      a("gate" + i), a("up" + i), f("ffn_norm" + i), a("swiglu" + i), f("gate" + i), f("up" + i);
      a("down" + i), f("swiglu" + i), f("argsort" + i), f("weights_norm" + i), a("ffn_out" + i), f("down" + i);
    } else {
      a("gate" + i), a("up" + i), f("ffn_norm" + i), a("swiglu" + i), f("gate" + i), f("up" + i);
      a("ffn_out" + i), f("swiglu" + i);
    }
    f(stream);
    if (s.deepstack > 0 && il + 1 == s.deepstack) f("padded");
  }
  a("result_output");
  return ev;
}

std::uint64_t qwen3_tensor_bytes(std::string_view name, const LlamaCppQwen3GraphShape& s, bool last_layer) {
  const std::string_view kind = name.substr(0, name.find('-'));
  const std::uint64_t T = s.n_ubatch;
  const std::uint64_t outputs = s.n_outputs == 0 ? T : std::min(s.n_outputs, T);
  const std::uint64_t rows = last_layer ? outputs : T;  // past the last layer's selection
  const auto f32 = f32_matrix;
  const std::uint64_t q = checked_mul(s.n_heads, s.d_head, "c"), kv = checked_mul(s.n_kv_heads, s.d_head, "c");
  const std::uint64_t k = s.experts_per_token;
  if (kind == "inp_tokens") return f32(T, 1);
  if (kind == "inp_pos") return f32(T, s.positions);
  if (kind == "out_ids") return f32(outputs, 1);
  if (kind == "k_idxs") return f32(T, 2);  // an i64 a token; without flash attention V's an i64 an element
  if (kind == "v_idxs") return s.flash_attn ? f32(T, 2) : checked_mul(checked_mul(T, kv, "c"), 8, "c");
  if (kind == "mask") return checked_mul(checked_mul(s.n_kv, T, "c"), s.flash_attn ? 2 : 4, "compute buffer");
  if (kind == "inp_embd" || kind == "padded") return f32(T, checked_mul(s.d_model, 1 + s.deepstack, "c"));
  if (kind == "q" || kind == "q_norm" || kind == "qrot" || kind == "fa" || kind == "orot" || kind == "kqv" ||
      kind == "kqv_out")
    return f32(T, q);
  if (kind == "k" || kind == "k_norm" || kind == "krot" || kind == "v" || kind == "vrot") return f32(T, kv);
  if (kind == "kq") return checked_mul(f32(T, s.n_kv), s.n_heads, "compute buffer");
  if (kind == "k_rot" || kind == "v_rot") return rotation_bytes(kind == "k_rot" ? s.d_head : 0);
  if (kind == "sel_attn" || kind == "sel_residual") return f32(outputs, s.d_model);
  if (kind == "logits" || kind == "argsort") return f32(rows, s.n_experts);
  if (kind == "weights" || kind == "weights_norm") return f32(rows, k);
  if (kind == "weights_sum") return f32(rows, 1);
  if (kind == "down") return f32(rows, checked_mul(k, s.d_model, "c"));
  if (kind == "result_output") return f32(outputs, s.vocab);
  const bool routed = name.find('-') != std::string_view::npos && !s.experts.empty() &&
                      s.experts[std::stoull(std::string(name.substr(name.find('-') + 1)))];
  if (kind == "gate" || kind == "up" || kind == "swiglu") {
    return routed ? f32(rows, checked_mul(k, s.expert_width, "c")) : f32(rows, s.d_ff);
  }
  if (kind == "ffn_norm" || kind == "ffn_out") return f32(rows, s.d_model);
  return f32(T, s.d_model);  // the embeddings, the attention's norm and output
}

// A vision tower's graph, its tensors named by kind and layer.
std::vector<GraphEvent> gemma3_vision_events(bool flash_attn, std::uint64_t layers) {
  std::vector<GraphEvent> ev;
  const auto a = [&](std::string n) { ev.push_back({'A', std::move(n)}); };
  const auto f = [&](std::string n) { ev.push_back({'F', std::move(n)}); };
  // The patch embedding: the image unrolled (im2col), multiplied by the kernel, then made
  // contiguous twice; the second copy takes the bias and the positions in place and is the
  // residual stream's start.
  a("inp_raw"), a("im2col"), f("inp_raw"), a("patches"), f("im2col"), a("patches_cont"), f("patches"),
      a("residual-start"), f("patches_cont");
  for (std::uint64_t il = 0; il < layers; ++il) {
    const std::string i = "-" + std::to_string(il);
    const std::string residual = il == 0 ? "residual-start" : "attn-" + std::to_string(il - 1);
    a("ln1" + i), a("q" + i), a("k" + i), a("v" + i), f("ln1" + i);
    // The projection's transposed copy joins the graph with the last layer's attention inputs.
    if (il + 1 == layers) a("projection_t");
    if (flash_attn) {
      a("kcast" + i), f("k" + i), a("vcast" + i), f("v" + i), a("fa" + i), f("q" + i), f("kcast" + i), f("vcast" + i);
      a("attn" + i), f("fa" + i);
    } else {
      a("vcont" + i), f("v" + i), a("kq" + i), f("k" + i), f("q" + i), a("kqv" + i), f("vcont" + i), f("kq" + i),
          a("kqv_out" + i), f("kqv" + i);
      a("attn" + i), f("kqv_out" + i);
    }
    // The attention's output projection holds the residual in place (ffn_inp, then layer_out).
    f(residual), a("ln2" + i), a("up" + i), f("ln2" + i), a("down" + i), f("up" + i), f("down" + i);
  }
  a("post_ln"), f("attn-" + std::to_string(layers - 1)), a("post_ln_t"), f("post_ln"), a("pool"), f("post_ln_t"),
      a("pool_t"), f("pool"), a("output"), f("projection_t"), f("pool_t");
  return ev;
}

std::vector<GraphEvent> qwen3vl_vision_events(bool flash_attn, const std::vector<bool>& deepstack) {
  std::vector<GraphEvent> ev;
  const auto a = [&](std::string n) { ev.push_back({'A', std::move(n)}); };
  const auto f = [&](std::string n) { ev.push_back({'F', std::move(n)}); };
  const std::size_t layers = deepstack.size();
  // Two temporal kernels' patches, added; the sum reordered into the merger's 2 x 2 order (the
  // residual stream's start, which takes the bias and the positions in place); the positions
  // interpolated to the image's grid and reordered alike.
  a("inp_raw"), a("positions"), a("im2col0"), a("conv0"), f("im2col0"), a("conv0_cont"), f("conv0"), a("im2col1"),
      f("inp_raw"), a("conv1"), f("im2col1"), a("conv1_cont"), f("conv1"), f("conv1_cont");
  a("perm"), f("conv0_cont"), a("attn-start"), f("perm");
  a("interp"), a("pe2d"), f("interp"), a("pe4d"), f("pe2d"), a("pe3d"), f("pe4d"), f("pe3d");
  for (std::size_t il = 0; il < layers; ++il) {
    const std::string i = "-" + std::to_string(il);
    a("ln1" + i), a("qkv" + i), f("ln1" + i), a("qrope" + i), a("krope" + i);
    if (il + 1 == layers) f("positions");
    if (flash_attn) {
      a("kcast" + i), f("krope" + i), a("vcast" + i), f("qkv" + i), a("fa" + i), f("qrope" + i), f("kcast" + i),
          f("vcast" + i), a("attn" + i), f("fa" + i);
    } else {
      a("vcont" + i), f("qkv" + i), a("kq" + i), f("krope" + i), f("qrope" + i), a("kqv" + i), f("vcont" + i),
          f("kq" + i), a("kqv_out" + i), f("kqv" + i), a("attn" + i), f("kqv_out" + i);
    }
    // The residual is added in place; a deepstack layer's output waits for its merger.
    if (il == 0 || !deepstack[il - 1]) f(il == 0 ? "attn-start" : "attn-" + std::to_string(il - 1));
    a("ln2" + i), a("up" + i), f("ln2" + i), a("down" + i), f("up" + i), f("down" + i);
  }
  a("post_ln");
  if (!deepstack.back()) f("attn-" + std::to_string(layers - 1));
  a("merger_up"), f("post_ln"), a("merger_out"), f("merger_up");
  // Each deepstack merger in turn, its output concatenated to the earlier ones', then to the
  // main merger's.
  std::string features;  // the deepstack outputs so far: one merger's, or a concatenation
  std::size_t parts = 0;
  for (std::size_t il = 0; il < layers; ++il) {
    if (!deepstack[il]) continue;
    const std::string i = "-" + std::to_string(il);
    a("dsnorm" + i), f("attn" + i), a("dsup" + i), f("dsnorm" + i), a("dsout" + i), f("dsup" + i);
    if (++parts == 1) {
      features = "dsout" + i;
      continue;
    }
    const std::string concat = "concat-" + std::to_string(parts);
    a(concat), f(features), f("dsout" + i);
    features = concat;
  }
  // The main merger's output and every deepstack one's: one part more than the last concatenation.
  if (parts > 0) a("concat-" + std::to_string(parts + 1)), f("merger_out"), f(features);
  return ev;
}

std::vector<GraphEvent> qwen2vl_vision_events(bool flash_attn, std::uint64_t layers, bool qwen2_5,
                                              std::uint64_t window_pattern) {
  std::vector<GraphEvent> ev;
  const auto a = [&](std::string n) { ev.push_back({'A', std::move(n)}); };
  const auto f = [&](std::string n) { ev.push_back({'F', std::move(n)}); };
  const auto windowed = [&](std::uint64_t il) { return window_pattern > 0 && (il + 1) % window_pattern != 0; };
  std::uint64_t first_window = layers, last_window = layers;
  for (std::uint64_t il = 0; il < layers; ++il) {
    if (!windowed(il)) continue;
    if (first_window == layers) first_window = il;
    last_window = il;
  }
  // With window attention (Qwen2.5-VL) the patches are put in window order and back, and the
  // windowed layers read a mask.
  const bool windows = window_pattern > 0, masked = first_window < layers;
  // The inputs, then Qwen3-VL's two temporal kernels' patches without its positions.
  a("inp_raw");
  if (windows) a("inv_window_idx");
  a("positions");
  if (masked) a("mask");
  if (windows) a("window_idx");
  a("im2col0"), a("conv0"), f("im2col0"), a("conv0_cont"), f("conv0"), a("im2col1"), f("inp_raw"), a("conv1"),
      f("im2col1"), a("conv1_cont"), f("conv1"), f("conv1_cont");
  a("perm"), f("conv0_cont"), a("attn-start"), f("perm");
  std::string residual = "attn-start";
  if (windows) a("win_rows"), f("attn-start"), f("inv_window_idx"), residual = "win_rows";
  for (std::uint64_t il = 0; il < layers; ++il) {
    const std::string i = "-" + std::to_string(il);
    a("ln1" + i), a("q" + i), a("qrope" + i), f("q" + i), a("k" + i), a("krope" + i), f("k" + i);
    if (il + 1 == layers) f("positions");
    a("v" + i), f("ln1" + i);
    if (flash_attn) {
      a("kcast" + i), f("krope" + i), a("vcast" + i), f("v" + i);
      // The f32 mask cast to f16 once (the f32 freed), and copied for each windowed layer.
      if (windowed(il)) {
        if (il == first_window) a("mask16"), f("mask");
        a("maskcopy" + i);
        if (il == last_window) f("mask16");
      }
      a("fa" + i), f("qrope" + i), f("kcast" + i), f("vcast" + i);
      if (windowed(il)) f("maskcopy" + i);
      a("attn" + i), f("fa" + i);
    } else {
      a("vcont" + i), f("v" + i), a("kq" + i), f("krope" + i), f("qrope" + i);
      if (il == last_window) f("mask");
      a("kqv" + i), f("vcont" + i), f("kq" + i), a("kqv_out" + i), f("kqv" + i), a("attn" + i), f("kqv_out" + i);
    }
    // The residual is added in place: the layer's output is its attention's.
    f(residual), residual = "attn" + i;
    a("ln2" + i);
    if (qwen2_5) {
      a("gate" + i), a("up" + i), f("ln2" + i), a("swiglu" + i), f("gate" + i), f("up" + i), a("down" + i),
          f("swiglu" + i);
    } else {
      a("up" + i), f("ln2" + i), a("down" + i), f("up" + i);
    }
    f("down" + i);
  }
  // The merger's norm (Qwen2.5-VL's RMS norm in place), its MLP, and the tokens put back in order.
  if (qwen2_5) {
    a("merger_up"), f(residual);
  } else {
    a("post_ln"), f(residual), a("merger_up"), f("post_ln");
  }
  a("merger_out"), f("merger_up");
  if (windows) a("window_out"), f("merger_out"), f("window_idx");
  return ev;
}

std::uint64_t vision_tensor_bytes(std::string_view name, const LlamaCppVisionGraphShape& s) {
  const std::string_view kind = name.substr(0, name.find('-'));
  const std::uint64_t columns = s.width / s.patch_size, rows = s.height / s.patch_size;
  const std::uint64_t T = checked_mul(columns, rows, "compute buffer");
  const std::uint64_t pool = std::max<std::uint64_t>(s.n_merge, 1);
  const std::uint64_t pooled = checked_mul(columns / pool, rows / pool, "compute buffer");
  const auto f32 = f32_matrix;
  if (kind == "inp_raw") return f32(checked_mul(3, checked_mul(s.width, s.height, "c"), "c"), 1);
  if (kind.starts_with("im2col")) {
    const std::uint64_t kernel = checked_mul(3, checked_mul(s.patch_size, s.patch_size, "c"), "c");
    return checked_mul(checked_mul(T, kernel, "compute buffer"), s.patch_element_bytes, "compute buffer");
  }
  if (kind == "positions") return f32(T, 4);                                   // M-RoPE's four i32 a patch
  if (kind == "inv_window_idx" || kind == "window_idx") return f32(T / 4, 1);  // an i32 a token
  if (kind == "mask") return f32(T, T);
  if (kind == "mask16" || kind == "maskcopy") return checked_mul(checked_mul(T, T, "c"), 2, "compute buffer");
  if (kind == "gate" || kind == "swiglu") return f32(T, s.d_ff);
  if (kind == "window_out") return f32(T / 4, s.text_width);
  if (kind == "kcast" || kind == "vcast") return checked_mul(checked_mul(T, s.d_model, "c"), 2, "compute buffer");
  if (kind == "kq") return checked_mul(f32(T, T), s.n_heads, "compute buffer");
  if (kind == "qkv") return f32(T, checked_mul(3, s.d_model, "c"));
  if (kind == "up") return f32(T, s.d_ff);
  if (kind == "projection_t") return s.projection_bytes;
  if (kind == "pool" || kind == "pool_t") return f32(pooled, s.d_model);
  if (kind == "output") return f32(pooled, s.text_width);
  // The 2 x 2 mergers' outputs, a quarter of the patches each, and their concatenations.
  if (kind == "merger_out" || kind == "dsout") return f32(T / 4, s.text_width);
  if (kind == "concat") {
    const std::uint64_t n = std::stoull(std::string(name.substr(name.find('-') + 1)));
    return checked_mul(f32(T / 4, s.text_width), n, "compute buffer");
  }
  return f32(T, s.d_model);  // the patches, the residual stream, norms, q, k, v and the attention's outputs
}

std::uint64_t replay(const std::vector<GraphEvent>& events, std::uint64_t alignment, const char* graph,
                     const std::function<std::uint64_t(std::string_view)>& bytes_of) {
  Allocator a(std::max<std::uint64_t>(alignment, 1));
  std::map<std::string, std::pair<std::uint64_t, std::uint64_t>, std::less<>> live;
  for (const GraphEvent& e : events) {
    if (e.op == 'A') {
      const std::uint64_t bytes = bytes_of(e.name);
      live[e.name] = {a.allocate(bytes), bytes};
      continue;
    }
    const auto it = live.find(e.name);
    if (it == live.end())
      throw Error(ErrorKind::internal, std::string(graph) + ": '" + e.name + "' freed, never allocated");
    a.release(it->second.first, it->second.second);
    live.erase(it);
  }
  return a.peak();
}

std::uint64_t llama_cpp_ssm_graph_bytes(const LlamaCppSsmGraphShape& s) {
  return replay(ssm_events(s.version, std::max<std::uint64_t>(s.n_layers, 1)), s.alignment, "llama.cpp Mamba graph",
                [&](std::string_view name) { return ssm_tensor_bytes(name, s); });
}

std::uint64_t llama_cpp_gemma3_graph_bytes(const LlamaCppGemma3GraphShape& s) {
  if (s.sliding.empty()) throw Error(ErrorKind::internal, "llama.cpp Gemma 3 graph: no layers");
  const std::string last = "-" + std::to_string(s.sliding.size() - 1);
  return replay(
      gemma3_events(s.flash_attn, s.sliding), s.alignment, "llama.cpp Gemma 3 graph", [&](std::string_view name) {
        // The kind in the kinds' own sizes; "kq" depends on the layer's cache.
        if (name.starts_with("kq-")) {
          const std::size_t il = std::stoull(std::string(name.substr(3)));
          const std::uint64_t cells = s.sliding[il] ? s.window_cells : s.global_cells;
          return checked_mul(checked_mul(checked_mul(s.n_ubatch, cells, "c"), s.n_heads, "c"), 4, "compute buffer");
        }
        return gemma3_tensor_bytes(name, s, name.ends_with(last));
      });
}

std::uint64_t llama_cpp_qwen3_graph_bytes(const LlamaCppQwen3GraphShape& s) {
  if (s.experts.empty() || s.deepstack >= s.experts.size())
    throw Error(ErrorKind::internal, "llama.cpp Qwen3 graph: no layers, or no layer past the deepstack ones");
  const std::string last = "-" + std::to_string(s.experts.size() - 1);
  return replay(qwen3_events(s), s.alignment, "llama.cpp Qwen3 graph",
                [&](std::string_view name) { return qwen3_tensor_bytes(name, s, name.ends_with(last)); });
}

std::uint64_t llama_cpp_vision_graph_bytes(const LlamaCppVisionGraphShape& s) {
  if (s.patch_size == 0 || s.width < s.patch_size || s.height < s.patch_size)
    throw Error(ErrorKind::invalid_input, "a vision tower's image must hold at least one patch", "mmproj");
  std::vector<bool> deepstack = s.deepstack;
  deepstack.resize(std::max<std::uint64_t>(s.n_layers, 1), false);
  const std::uint64_t layers = std::max<std::uint64_t>(s.n_layers, 1);
  const std::vector<GraphEvent> events = s.graph == VisionGraph::gemma3 ? gemma3_vision_events(s.flash_attn, layers)
                                         : s.graph == VisionGraph::qwen2vl
                                             ? qwen2vl_vision_events(s.flash_attn, layers, s.qwen2_5, s.window_pattern)
                                             : qwen3vl_vision_events(s.flash_attn, deepstack);
  return replay(events, s.alignment, "llama.cpp vision graph",
                [&](std::string_view name) { return vision_tensor_bytes(name, s); });
}

}  // namespace memplan::detail
