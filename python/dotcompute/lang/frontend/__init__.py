"""Python source → typed IR: parsing, name resolution, type inference, lowering, access analysis."""

from .module import ModuleBuilder, build_module, signature_text, type_code
from .signature import ParamDecl, param_decls, return_spec
from .source import ParsedFunction, parse_function, parse_tree

__all__ = ["ModuleBuilder", "build_module", "signature_text", "type_code", "ParamDecl", "param_decls",
           "return_spec", "ParsedFunction", "parse_function", "parse_tree"]
