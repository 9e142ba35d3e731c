"""`cc_embed_data`: embeds files into a C++ library (IREE c_embed_data / SAPI cc_embed_data).

Generates `<name>.h` and `<name>.cc` with a table of contents `{name, data, size}` so that a binary
that links the library needs no runfiles (downstream repositories included). Each blob is followed
by an extra NUL byte that is not counted in `size`.
"""

def cc_embed_data(name, srcs, identifier, namespace = "accelmem", flatten = True, **kwargs):
    """Embeds `srcs`; lookup by file name (basename if `flatten`) via `<identifier>_find(name)`."""
    generator = Label("//tools/embed:embed_data_generator")
    native.genrule(
        name = name + "_gen",
        srcs = srcs,
        outs = [name + ".h", name + ".cc"],
        tools = [generator],
        cmd = ("$(location %s) --identifier=%s --namespace=%s --flatten=%s " % (
            generator,
            identifier,
            namespace,
            "1" if flatten else "0",
        ) + "--header_include=%s/%s.h " % (native.package_name(), name) +
               "--out_h=$(location %s.h) --out_cc=$(location %s.cc) $(SRCS)" % (name, name)),
        message = "Embedding %d file(s) into %s" % (len(srcs), name),
    )
    native.cc_library(
        name = name,
        srcs = [name + ".cc"],
        hdrs = [name + ".h"],
        **kwargs
    )
